import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addVary, clientAddress, declaresJsonBody, requestProtocol, splitTarget } from '../../server/http/exchange.js';

const request = (headers: Record<string, string>, remoteAddress = '10.0.0.9', encrypted = false) =>
  ({ headers, socket: { remoteAddress, encrypted } }) as unknown as IncomingMessage;

const response = () => {
  const headers = new Map<string, unknown>();
  return {
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), value),
  } as unknown as ServerResponse;
};

describe('what the API reads of a request without express', () => {
  it('splits the target into path and query string', () => {
    expect(splitTarget('/api/x?a=1&b=2')).toEqual({ path: '/api/x', queryString: 'a=1&b=2' });
    expect(splitTarget('/api/x')).toEqual({ path: '/api/x', queryString: '' });
    expect(splitTarget(undefined)).toEqual({ path: '/', queryString: '' });
  });

  it("takes the client's address from X-Forwarded-For only as far as the trusted hops reach", () => {
    const req = request({ 'x-forwarded-for': '203.0.113.7, 198.51.100.2' });
    expect(clientAddress(req, 0)).toBe('10.0.0.9');
    expect(clientAddress(req, 1)).toBe('198.51.100.2');
    expect(clientAddress(req, 2)).toBe('203.0.113.7');
    // More hops than addresses: the leftmost, as express answers.
    expect(clientAddress(req, 5)).toBe('203.0.113.7');
    expect(clientAddress(request({}), 1)).toBe('10.0.0.9');
  });

  it('believes X-Forwarded-Proto only behind a trusted proxy', () => {
    expect(requestProtocol(request({ 'x-forwarded-proto': 'https' }), 0)).toBe('http');
    expect(requestProtocol(request({ 'x-forwarded-proto': 'https, http' }), 1)).toBe('https');
    expect(requestProtocol(request({}, '10.0.0.9', true), 0)).toBe('https');
  });

  it('adds a Vary field once, case-insensitively, and never next to *', () => {
    const res = response();
    addVary(res, 'Accept-Language');
    addVary(res, 'accept-language');
    addVary(res, 'Accept-Encoding');
    expect(res.getHeader('Vary')).toBe('Accept-Language, Accept-Encoding');
    const star = response();
    star.setHeader('Vary', '*');
    addVary(star, 'Accept-Encoding');
    expect(star.getHeader('Vary')).toBe('*');
  });

  it('reads a JSON body for application/json and +json types, with parameters', () => {
    expect(declaresJsonBody(request({ 'content-type': 'application/json; charset=utf-8' }))).toBe(true);
    expect(declaresJsonBody(request({ 'content-type': 'Application/Merge-Patch+JSON' }))).toBe(true);
    expect(declaresJsonBody(request({ 'content-type': 'text/plain' }))).toBe(false);
    expect(declaresJsonBody(request({ 'content-type': 'application/x-www-form-urlencoded' }))).toBe(false);
    expect(declaresJsonBody(request({}))).toBe(false);
  });
});
