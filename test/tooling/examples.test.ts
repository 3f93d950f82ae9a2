// Example values from schemas (the mock server's answers and its tests' requests).
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../server/ajv.js';
import { sampleSchema, stringMatching } from '../../scripts/lib/examples.js';

const root = {
  components: {
    schemas: {
      Money: { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$', examples: ['89.90'] },
      Category: {
        type: 'object',
        required: ['id', 'children'],
        properties: {
          id: { type: 'integer', minimum: 1 },
          children: { type: 'array', items: { $ref: '#/components/schemas/Category' } },
          parent: { anyOf: [{ $ref: '#/components/schemas/Category' }, { type: 'null' }] },
        },
      },
    },
  },
};
const response = { root, direction: 'response' as const };

describe('sampleSchema', () => {
  it("prefers the schema's own examples, then enum, then default", () => {
    expect(sampleSchema({ $ref: '#/components/schemas/Money' }, response)).toBe('89.90');
    expect(sampleSchema({ type: 'string', enum: [null, 'ios', 'android'] }, response)).toBe('ios');
    expect(sampleSchema({ type: 'integer', default: 20, minimum: 1 }, response)).toBe(20);
    expect(sampleSchema({ const: 'order.changed' }, response)).toBe('order.changed');
    // A property-level example wins over the referenced schema's.
    expect(sampleSchema({ $ref: '#/components/schemas/Money', examples: ['1.5'] }, response)).toBe('1.5');
  });

  it('composes values that satisfy formats, patterns and bounds when asked not to use examples', () => {
    const schema = {
      type: 'object',
      required: ['id', 'at', 'price', 'qty', 'phone', 'tags'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', format: 'uuid' },
        at: { type: 'string', format: 'date-time' },
        price: { $ref: '#/components/schemas/Money' },
        qty: { type: 'number', exclusiveMinimum: 0, maximum: 10 },
        phone: { type: 'string', pattern: '^\\+[1-9][0-9]{7,14}$' },
        tags: { type: 'array', items: { type: 'string', minLength: 12 }, minItems: 2 },
        note: { type: ['string', 'null'], maxLength: 3 },
      },
    };
    const value = sampleSchema(schema, { ...response, examplesFirst: false });
    const ajv = createAjv();
    ajv.addSchema(root, 'root.json');
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components', '"root.json#/components')));
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
    expect(value).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), tags: [expect.any(String), expect.any(String)] });
  });

  it('ends recursive schemas with the emptiest valid value', () => {
    const value = sampleSchema({ $ref: '#/components/schemas/Category' }, response) as any;
    expect(value.id).toBe(1);
    expect(Array.isArray(value.children)).toBe(true);
    // Nesting stops after a bounded depth: required arrays become [], optional refs are left out.
    let depth = 0;
    for (let node = value; node?.children?.length; node = node.children[0]) depth++;
    expect(depth).toBeLessThanOrEqual(2);
  });

  it('leaves readOnly properties out of requests and writeOnly ones out of responses', () => {
    const schema = { type: 'object', properties: { id: { type: 'integer', readOnly: true }, pin: { type: 'string', writeOnly: true } } };
    expect(sampleSchema(schema, { root, direction: 'request' })).toEqual({ pin: 'example' });
    expect(sampleSchema(schema, { root, direction: 'response' })).toEqual({ id: 0 });
  });
});

describe('stringMatching', () => {
  it.each([
    '^-?[0-9]+(\\.[0-9]+)?$',
    '^\\+[1-9][0-9]{7,14}$',
    '^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$',
    '^(?!0+(\\.0+)?$)[0-9]{1,3}(\\.[0-9]{1,3})?$',
    '^#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$',
    '^[A-Z]{2}-\\d{4}$',
    '^[^@\\s]+@[a-z]+\\.(com|org)$',
  ])('finds a string matching %s', (pattern) => {
    const s = stringMatching(pattern);
    expect(s).toBeTypeOf('string');
    expect(new RegExp(pattern, 'u').test(s!)).toBe(true);
  });

  it('respects length bounds and gives up on what it cannot satisfy', () => {
    const s = stringMatching('^[0-9]+$', 3, 5);
    expect(s).toMatch(/^[0-9]{3,5}$/);
    expect(stringMatching('^[0-9]{2}$', 5)).toBeUndefined();
    expect(stringMatching('(unclosed')).toBeUndefined();
  });
});
