import type { ColumnType } from 'kysely';

/** timestamptz: read as Date, written as Date or ISO string; optional on insert (columns with a
 * default). Do not wrap it in Generated<>: Kysely would nest the ColumnTypes and comparisons break. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** numeric: a decimal string both ways (see db/connection.ts). */
export type Decimal = ColumnType<string, string | number, string | number>;
/** jsonb: read parsed, written as JSON text. */
export type Json<T = unknown> = ColumnType<T, string, string>;
