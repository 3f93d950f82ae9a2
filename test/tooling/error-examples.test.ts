// The shared error responses show their own examples in the docs and in mock servers (Prism,
// `npm run mock`): a 404 shows NOT_FOUND, a 422 the {loc, msg, type} list, a 429 RATE_LIMITED -
// not the UNAUTHORIZED example of ErrorResponse, which every shared response showed before.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../server/ajv.js';

const EXPECTED: Record<string, string> = {
  BadRequest: 'MALFORMED_JSON',
  Unauthorized: 'UNAUTHORIZED',
  Forbidden: 'STORE_NOT_ASSIGNED',
  NotFound: 'NOT_FOUND',
  Conflict: 'IDEMPOTENCY_CONFLICT',
  PayloadTooLarge: 'PAYLOAD_TOO_LARGE',
  UnsupportedMediaType: 'UNSUPPORTED_MEDIA_TYPE',
  ValidationFailed: 'VALIDATION_ERROR',
  TooManyRequests: 'RATE_LIMITED',
  InternalError: 'INTERNAL_ERROR',
  BadGateway: 'GEOCODER_UNAVAILABLE',
  ServiceUnavailable: 'DATABASE_UNAVAILABLE',
};

describe.each(['test', 'prod'])('shared error responses of the %s spec', (env) => {
  const doc = JSON.parse(readFileSync(new URL(`../../generated/openapi.${env}.json`, import.meta.url), 'utf8'));
  const ajv = createAjv();
  ajv.addSchema(doc, 'doc.json');
  const validate = ajv.compile({ $ref: 'doc.json#/components/schemas/ErrorResponse' });
  const shared = Object.entries<any>(doc.components.responses).filter(
    ([, r]) => r.content?.['application/json']?.schema?.$ref === '#/components/schemas/ErrorResponse',
  );

  it('each has an example of its own status, valid against ErrorResponse', () => {
    expect(shared.map(([name]) => name).sort()).toEqual(
      Object.keys(EXPECTED)
        .filter((n) => n in doc.components.responses)
        .sort(),
    );
    for (const [name, response] of shared) {
      const example = response.content['application/json'].example;
      expect(example, name).toBeDefined();
      expect(validate(example), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(example.code, name).toBe(EXPECTED[name]);
    }
  });

  it('the 422 shows the {loc, msg, type} list and the 429 its retry_after_seconds', () => {
    const validation = doc.components.responses.ValidationFailed.content['application/json'].example;
    expect(validation.detail).toEqual([{ loc: ['body', 'phone'], msg: expect.any(String), type: 'pattern' }]);
    const limited = doc.components.responses.TooManyRequests;
    expect(limited.content['application/json'].example.retry_after_seconds).toBeGreaterThan(0);
    expect(Object.keys(limited.headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
  });
});
