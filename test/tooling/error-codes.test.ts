// The error codes are one list, the spec's ErrorCode enum, and each has its HTTP status in one
// table (services/errors.ts ERROR_STATUS): the table, the enum and the tables the docs show agree.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, appError, conflict, ERROR_STATUS, notFound, statusOf, unprocessable, type ErrorCode } from '../../services/errors.js';

const specOf = (env: 'test' | 'prod') => JSON.parse(readFileSync(new URL(`../../generated/openapi.${env}.json`, import.meta.url), 'utf8'));
const statusesOf = (code: ErrorCode): number[] => {
  const entry: number | readonly number[] = ERROR_STATUS[code];
  return typeof entry === 'number' ? [entry] : [...entry];
};
const codes = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Rows `| `CODE` | 409, 422 | ... |` of a markdown table, as code -> statuses. */
function tableRows(markdown: string, columns: { code: number; status: number }): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const line of markdown.split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const status = cells[columns.status]?.split(',').map((s) => Number(s.trim()));
    if (!status || status.some((s) => !Number.isInteger(s) || s < 400)) continue;
    for (const [, code] of cells[columns.code]!.matchAll(/`([A-Za-z_]+)`/g)) rows.set(code!, status);
  }
  return rows;
}

describe.each(['test', 'prod'] as const)('the error codes of the %s spec', (env) => {
  const doc = specOf(env);
  const schema = doc.components.schemas.ErrorCode;

  it('are the codes of the status table, each once', () => {
    expect(new Set(schema.enum).size).toBe(schema.enum.length);
    expect([...schema.enum].sort()).toEqual([...codes].sort());
  });

  it('are the code of every error body schema', () => {
    const ref = { $ref: '#/components/schemas/ErrorCode' };
    expect(doc.components.schemas.ErrorResponse.properties.code).toMatchObject(ref);
    expect(doc.components.schemas.OrderCommandError.properties.code).toMatchObject(ref);
    expect(doc.components.schemas.PickerErrorResponse.properties.code).toMatchObject(ref);
  });

  it('are documented with the statuses of the table', () => {
    const documented = tableRows(schema.description, { code: 0, status: 1 });
    expect([...documented.keys()].sort()).toEqual([...codes].sort());
    for (const code of codes) expect(documented.get(code), code).toEqual(statusesOf(code));
  });

  it("agree with the picker commands' table of PickerErrorResponse", () => {
    const picker = tableRows(doc.components.schemas.PickerErrorResponse.description, { code: 1, status: 0 });
    expect(picker.size).toBeGreaterThan(20);
    for (const [code, [status]] of picker) expect(statusesOf(code as ErrorCode), code).toContain(status);
  });
});

describe('the status of an error', () => {
  it('is the one of the table for a code that has one', () => {
    expect(statusOf('ITEM_STATE_CONFLICT')).toBe(409);
    expect(statusOf('QUANTITY_ABOVE_ORDERED')).toBe(422);
    const e = appError('OUT_OF_STOCK', 'Not enough stock', { extra: { lines: [] } });
    expect([e.status, e.code, e.extra]).toEqual([409, 'OUT_OF_STOCK', { lines: [] }]);
  });

  it('is chosen by the helper among the two of a code that has two', () => {
    expect(unprocessable('SLOT_FULL', 'full').status).toBe(422);
    expect(conflict('SLOT_FULL', 'full').status).toBe(409);
    expect(notFound('No store', 'STORE_NOT_FOUND').status).toBe(404);
  });

  it('cannot disagree with the table, nor name a code the contract does not list (checked by tsc)', () => {
    // @ts-expect-error a typo is not a code
    expect(conflict('ORDER_BSY', 'x').code).toBe('ORDER_BSY');
    // @ts-expect-error VALIDATION_ERROR is a 422, never a 409
    expect(conflict('VALIDATION_ERROR', 'x').status).toBe(409);
    // @ts-expect-error INVALID_CREDENTIALS is a 401
    expect(new AppError(403, 'INVALID_CREDENTIALS', 'x').status).toBe(403);
    // @ts-expect-error SLOT_FULL has two statuses: the caller says which
    expect(appError('SLOT_FULL', 'x').code).toBe('SLOT_FULL');
  });
});
