// A socket whose client stopped taking messages is skipped once its unsent backlog reaches the cap,
// instead of buffering every event for as long as it stays connected.
import { describe, expect, it } from 'vitest';
import { sendUnlessBacklogged } from '../../server/realtime/socket-channel.js';

const socket = (bufferedAmount: number, readyState = 1) => {
  const sent: string[] = [];
  return { sent, ws: { OPEN: 1 as const, readyState, bufferedAmount, send: (m: string) => void sent.push(m) } };
};

describe('sendUnlessBacklogged', () => {
  it('sends while the backlog is under the cap', () => {
    const { ws, sent } = socket(1000);
    expect(sendUnlessBacklogged(ws as never, 'event', 4096)).toBe(true);
    expect(sent).toEqual(['event']);
  });

  it('drops the message at the cap and beyond', () => {
    for (const buffered of [4096, 100_000]) {
      const { ws, sent } = socket(buffered);
      expect(sendUnlessBacklogged(ws as never, 'event', 4096)).toBe(false);
      expect(sent).toEqual([]);
    }
  });

  it('never caps with 0, and never sends to a socket that is not open', () => {
    const unbounded = socket(10_000_000);
    expect(sendUnlessBacklogged(unbounded.ws as never, 'event', 0)).toBe(true);
    const closing = socket(0, 2);
    expect(sendUnlessBacklogged(closing.ws as never, 'event', 4096)).toBe(false);
    expect(closing.sent).toEqual([]);
  });
});
