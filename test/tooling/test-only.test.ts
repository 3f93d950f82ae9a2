// Capabilities still in TEST: PROD's bundle leaves out their schema properties (and PROD does not
// route their operations, checked by npm run generate).
import { describe, expect, it } from 'vitest';
import { withoutTestOnlyProperties } from '../../scripts/lib/test-only.js';
import { loadSpec } from '../../server/contract.js';

describe('withoutTestOnlyProperties', () => {
  it('drops properties marked x-test-only, from `required` too, at any depth, and keeps the rest', () => {
    const doc = {
      components: {
        schemas: {
          A: {
            type: 'object',
            required: ['kept', 'dropped'],
            properties: { kept: { type: 'string' }, dropped: { type: 'string', 'x-test-only': true } },
          },
          B: { type: 'array', items: { type: 'object', properties: { inner: { oneOf: [], 'x-test-only': true }, other: {} } } },
        },
      },
    };
    expect(withoutTestOnlyProperties(doc)).toEqual({
      components: {
        schemas: {
          A: { type: 'object', required: ['kept'], properties: { kept: { type: 'string' } } },
          B: { type: 'array', items: { type: 'object', properties: { other: {} } } },
        },
      },
    });
  });
});

describe('the bundles', () => {
  it("PROD's checkout has no line replacement preference yet; TEST's has", () => {
    type Schema = { properties: Record<string, unknown>; additionalProperties?: boolean };
    const itemInput = (env: 'TEST' | 'PROD') => (loadSpec(env).components.schemas as Record<string, Schema>).OrderItemInput!;
    expect(Object.keys(itemInput('TEST').properties)).toContain('replacement');
    expect(Object.keys(itemInput('PROD').properties)).not.toContain('replacement');
    // So PROD's request validator refuses the field rather than ignoring it.
    expect(itemInput('PROD').additionalProperties).toBe(false);
  });
});
