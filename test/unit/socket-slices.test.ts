// Work over every socket of a channel is spread over time: pings go to one group of sockets per
// turn, not to all 10,000 in one tick, and sockets whose tokens expire together are closed a slice
// at a time, each socket still pinged once per interval and closed once its token has expired.
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EXPIRY_SLICE, keepAlive, tokenExpiry } from '../../server/realtime/socket-channel.js';

class FakeSocket extends EventEmitter {
  pings = 0;
  terminated = false;
  closedWith: number | null = null;
  answersPings = true;
  ping() {
    this.pings++;
    if (this.answersPings) queueMicrotask(() => this.emit('pong'));
  }
  terminate() {
    this.terminated = true;
    this.emit('close');
  }
  close(code: number) {
    this.closedWith = code;
    this.emit('close');
  }
}
const sockets = (n: number) => Array.from({ length: n }, () => new FakeSocket());
const asWs = (s: FakeSocket) => s as unknown as WebSocket;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('keepAlive', () => {
  it('pings one group of sockets per turn, and every socket once per interval', async () => {
    const heartbeat = keepAlive(30_000, 30);
    const all = sockets(300);
    all.forEach((s) => heartbeat.track(asWs(s)));
    await vi.advanceTimersByTimeAsync(1000); // one turn
    expect(all.filter((s) => s.pings > 0)).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(29_000); // the rest of the interval
    expect(all.map((s) => s.pings)).toEqual(all.map(() => 1));
    heartbeat.stop();
  });

  it('terminates a socket that did not answer its previous ping, at its next turn', async () => {
    const heartbeat = keepAlive(30_000, 30);
    const all = sockets(60);
    all.forEach((s) => heartbeat.track(asWs(s)));
    const silent = all[7]!;
    silent.answersPings = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(silent.terminated).toBe(false);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(all.filter((s) => s.terminated)).toEqual([silent]);
    // Terminated, it leaves its group: no further pings.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(silent.pings).toBe(1);
    heartbeat.stop();
  });

  it('keeps the groups even as sockets come and go', async () => {
    const heartbeat = keepAlive(30_000, 3);
    const first = sockets(30);
    first.forEach((s) => heartbeat.track(asWs(s)));
    first.slice(0, 15).forEach((s) => s.close(1000)); // gone from the first groups unevenly
    const later = sockets(15);
    later.forEach((s) => heartbeat.track(asWs(s)));
    const perTurn: number[] = [];
    for (let t = 0; t < 3; t++) {
      const before = [...first, ...later].reduce((n, s) => n + s.pings, 0);
      await vi.advanceTimersByTimeAsync(10_000);
      perTurn.push([...first, ...later].reduce((n, s) => n + s.pings, 0) - before);
    }
    expect(perTurn).toEqual([10, 10, 10]);
    heartbeat.stop();
  });
});

describe('tokenExpiry', () => {
  it('closes each socket with 1008 once its token has expired, never before', async () => {
    let now = 1_000_000;
    const expiry = tokenExpiry(() => now);
    const [soon, later, gone] = sockets(3);
    expiry.add(asWs(soon!), now + 1500);
    expiry.add(asWs(later!), now + 60_000);
    expiry.add(asWs(gone!), now + 1500);
    gone!.close(1000); // closed by its client first
    gone!.closedWith = null;
    now += 1000;
    await vi.advanceTimersByTimeAsync(1000);
    expect(soon!.closedWith).toBeNull();
    now += 1000;
    await vi.advanceTimersByTimeAsync(1000);
    expect([soon!.closedWith, later!.closedWith, gone!.closedWith]).toEqual([1008, null, null]);
    now += 60_000;
    await vi.advanceTimersByTimeAsync(1000);
    expect(later!.closedWith).toBe(1008);
    expiry.stop();
  });

  it('closes sockets expiring together a slice at a time, letting the event loop run between slices', async () => {
    let now = 1_000_000;
    const expiry = tokenExpiry(() => now);
    const all = sockets(EXPIRY_SLICE * 2 + 10);
    all.forEach((s) => expiry.add(asWs(s), now + 500));
    now += 1000;
    const closedBeforeEachImmediate: number[] = [];
    const watch = () => {
      closedBeforeEachImmediate.push(all.filter((s) => s.closedWith === 1008).length);
      if (closedBeforeEachImmediate.length < 5) setImmediate(watch);
    };
    vi.advanceTimersByTime(1000); // the sweep's tick: the first slice only
    expect(all.filter((s) => s.closedWith === 1008)).toHaveLength(EXPIRY_SLICE);
    setImmediate(watch);
    await vi.advanceTimersByTimeAsync(10);
    // Other work ran while some were still open; in the end every one is closed.
    expect(closedBeforeEachImmediate.some((n) => n < all.length)).toBe(true);
    expect(closedBeforeEachImmediate.at(-1)).toBe(all.length);
    expiry.stop();
  });
});
