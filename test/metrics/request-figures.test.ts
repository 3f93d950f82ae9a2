// The request histogram and status counter: Prometheus semantics (cumulative `le` buckets, an
// observation equal to a bound counts in that bucket, +Inf equals _count) and escaping.
import { describe, expect, it } from 'vitest';
import { RequestFigures } from '../../platform/metrics.js';

describe('RequestFigures', () => {
  it('renders cumulative buckets, sum, count and per-status counters', () => {
    const figures = new RequestFigures();
    figures.observe('getProfile', 200, 0.005); // exactly on a bound: counts in le="0.005"
    figures.observe('getProfile', 200, 0.02);
    figures.observe('getProfile', 401, 12); // above the largest bound: only +Inf
    figures.observe('none', 404, 0.001);
    const text = figures.render();
    const lines = text.split('\n');
    const sample = (prefix: string) =>
      lines
        .find((l) => l.startsWith(prefix))
        ?.split(' ')
        .at(-1);

    expect(sample('grocery_http_request_duration_seconds_bucket{le="0.005",operation_id="getProfile"}')).toBe('1');
    expect(sample('grocery_http_request_duration_seconds_bucket{le="0.01",operation_id="getProfile"}')).toBe('1');
    expect(sample('grocery_http_request_duration_seconds_bucket{le="0.025",operation_id="getProfile"}')).toBe('2');
    expect(sample('grocery_http_request_duration_seconds_bucket{le="10",operation_id="getProfile"}')).toBe('2');
    expect(sample('grocery_http_request_duration_seconds_bucket{le="+Inf",operation_id="getProfile"}')).toBe('3');
    expect(Number(sample('grocery_http_request_duration_seconds_sum{operation_id="getProfile"}'))).toBeCloseTo(12.025, 9);
    expect(sample('grocery_http_request_duration_seconds_count{operation_id="getProfile"}')).toBe('3');
    expect(sample('grocery_http_requests_total{operation_id="getProfile",status="200"}')).toBe('2');
    expect(sample('grocery_http_requests_total{operation_id="getProfile",status="401"}')).toBe('1');
    expect(sample('grocery_http_requests_total{operation_id="none",status="404"}')).toBe('1');
    expect(lines).toContain('# TYPE grocery_http_request_duration_seconds histogram');
    expect(lines).toContain('# TYPE grocery_http_requests_total counter');
  });

  it('escapes label values and renders nothing but the headers before the first request', () => {
    const figures = new RequestFigures();
    expect(
      figures
        .render()
        .split('\n')
        .filter((l) => l && !l.startsWith('#')),
    ).toEqual([]);
    figures.observe('odd"name\\x', 200, 0.1);
    expect(figures.render()).toContain('grocery_http_requests_total{operation_id="odd\\"name\\\\x",status="200"} 1');
  });
});
