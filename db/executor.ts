import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.js';

/** What query functions take first: the pool-backed db, or the transaction the caller opened. */
export type Executor = Kysely<DB> | Transaction<DB>;
