// The one Ajv configuration of the service: JSON Schema 2020-12 (OpenAPI 3.1) with formats.
// openapi-backend's own Ajv is draft-07, under which `prefixItems`/`unevaluatedProperties`
// misbehave silently and formats go unchecked.
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

// A CommonJS module: from ESM its default import is `module.exports`, whose `default` is the plugin.
const addFormats = ajvFormats.default;

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

/** The keyword of the one error that stands for the errors a bounded validator did not keep. */
export const OMITTED_ERRORS_KEYWORD = 'errorsOmitted';

/** How many errors past the kept ones a list holds, from its OMITTED_ERRORS_KEYWORD entry (0: none). */
export function omittedErrorCount(errors: readonly ErrorObject[]): number {
  let omitted = 0;
  for (const e of errors) if (e.keyword === OMITTED_ERRORS_KEYWORD) omitted += Number((e.params as { count?: number }).count ?? 0);
  return omitted;
}

/**
 * Makes every validator `ajv` compiles keep at most `keep` errors and count the rest in one
 * OMITTED_ERRORS_KEYWORD entry. With `allErrors` Ajv reports one error per unknown key or bad
 * array item, so an anonymous 1 MiB body can carry hundreds of thousands: whoever reads the list
 * (openapi-backend spreads it into a call, which overflows the stack past about 120,000; the
 * error answer is built from it) must see a list of bounded length.
 */
export function boundErrors(ajv: Ajv2020, keep: number): Ajv2020 {
  const compile = ajv.compile.bind(ajv) as (schema: object, meta?: boolean) => ValidateFunction;
  const bounded = (schema: object, meta?: boolean): ValidateFunction => {
    const validate = compile(schema, meta);
    const wrapper = ((data: unknown, ctx?: unknown) => {
      const valid = (validate as (d: unknown, c?: unknown) => boolean)(data, ctx);
      const errors = validate.errors;
      wrapper.errors =
        errors && errors.length > keep
          ? [
              ...errors.slice(0, keep),
              {
                instancePath: '',
                schemaPath: '',
                keyword: OMITTED_ERRORS_KEYWORD,
                params: { count: errors.length - keep },
                message: `${errors.length - keep} more errors`,
              },
            ]
          : errors;
      return valid;
    }) as ValidateFunction;
    wrapper.schema = validate.schema;
    wrapper.schemaEnv = validate.schemaEnv;
    return wrapper;
  };
  ajv.compile = bounded as Ajv2020['compile'];
  return ajv;
}

/** How many errors a request validator keeps: enough for the answer's list after duplicates go. */
export const REQUEST_VALIDATION_ERRORS_KEPT = 100;

/**
 * openapi-backend's `customizeAjv`: one bounded Ajv per validation context, built once
 * (openapi-backend calls the hook for every validator it compiles).
 */
export function requestValidationAjv(): (orig: unknown, opts: Options, context: string) => Ajv2020 {
  const byContext = new Map<string, Ajv2020>();
  return (_orig, opts, context) => {
    const key = `${context}:${opts.coerceTypes ? 'coerce' : 'strict'}`;
    let ajv = byContext.get(key);
    if (!ajv) {
      ajv = boundErrors(createAjv({ coerceTypes: opts.coerceTypes, useDefaults: false }), REQUEST_VALIDATION_ERRORS_KEPT);
      byContext.set(key, ajv);
    }
    return ajv;
  };
}
