// The error codes of the contract (the spec's ErrorCode enum, generated) as domain vocabulary:
// a rule names its outcome by code; only services/errors.ts decides which HTTP status it gets.
import type { components } from '../generated/api.test.js';

/** Every `code` an error body may carry; a code the contract does not list does not compile. */
export type ErrorCode = components['schemas']['ErrorCode'];
