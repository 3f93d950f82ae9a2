// The one Ajv configuration of the service: JSON Schema 2020-12 (OpenAPI 3.1) with formats.
// openapi-backend's own Ajv is draft-07, under which `prefixItems`/`unevaluatedProperties`
// misbehave silently and formats go unchecked (DESIGN.md §3).
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// `time` in the interface spec is a wall-clock time of a store ("09:00:00", or with the store's
// offset "09:00:00+03:00"); ajv-formats' `time` demands the offset, so it is made optional here.
const LOCAL_TIME = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/i;

export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false, // OpenAPI keywords (example, discriminator, x-*) are not JSON Schema
    allErrors: true,
    validateFormats: true,
    ...options,
  });
  addFormats(ajv);
  ajv.addFormat('time', LOCAL_TIME);
  return ajv;
}
