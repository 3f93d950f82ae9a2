import { describe, expect, it } from 'vitest';
import { loadSpec } from '../../server/contract.js';
import { RouteTable } from '../../server/router.js';

describe('RouteTable', () => {
  const table = new RouteTable(loadSpec('TEST'));
  const op = (method: string, path: string) => table.matchPath(path)?.methods.get(method)?.operationId;

  it('matches every operation of the spec at its own path', () => {
    for (const o of table.operations) {
      const concrete = o.path.replace(/\{[^}]+\}/g, '123');
      expect(op(o.method, concrete), `${o.method} ${o.path}`).toBe(o.operationId);
    }
  });

  it('prefers literal segments over templates', () => {
    expect(table.matchPath('/api/catalog/products/recommendations')?.template).toBe('/api/catalog/products/recommendations');
    expect(table.matchPath('/api/catalog/products/6a0e7a9e-0000-4000-8000-000000000000')?.template).toBe(
      '/api/catalog/products/{product_id}',
    );
    expect(table.matchPath('/api/picker/catalog/products/v2')?.template).toBe('/api/picker/catalog/products/v2');
  });

  it('accepts the other trailing-slash form of exact paths only', () => {
    expect(table.matchPath('/api/accounts/me')?.template).toBe('/api/accounts/me/');
    expect(table.matchPath('/api/accounts/me/preferences/')?.template).toBe('/api/accounts/me/preferences');
    expect(table.matchPath('/api/nothing')).toBeUndefined();
  });

  it('lists allowed methods of a path', () => {
    expect(table.allowedMethods('/api/accounts/me/').sort()).toEqual(['DELETE', 'GET', 'PATCH']);
    expect(table.allowedMethods('/api/unknown')).toEqual([]);
  });
});
