// Statements whose SQL text Kysely builds once per process, not on every call: building a large
// statement (the item command's read: forty columns, five joins, its CTEs) costs more CPU than
// parsing its answer, yet its text never changes - only its values do.
// The same text each time also lets the pool find its named prepared statement without hashing
// the text anew (db/connection.ts).
import { CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import type { Executor } from './executor.js';

/** Stands in for the value named `name` while the text is built. */
class ValueSlot {
  constructor(readonly name: string) {}
}

/**
 * A statement built once: on its first call `build` gets a stand-in for each of `values` (use
 * them only as values in the statement, never to decide its shape: a statement of another shape
 * is another compiledOnce), and every call sends the text built then with its own values in
 * their places.
 */
export function compiledOnce<Values extends Record<string, unknown>, Row>(
  build: (db: Executor, values: Values) => RawBuilder<Row>,
): (db: Executor, values: Values) => Promise<QueryResult<Row>> {
  let text: string | null = null;
  /** Per parameter: the value it takes (by name), or the constant the statement itself holds. */
  let parameters: readonly unknown[] = [];
  return (db, values) => {
    if (text === null) {
      const slots = new Map<string, ValueSlot>();
      const standIns = new Proxy({} as Values, {
        get: (_, name) => {
          if (typeof name !== 'string') return undefined;
          if (!slots.has(name)) slots.set(name, new ValueSlot(name));
          return slots.get(name);
        },
      });
      const compiled = build(db, standIns).compile(db);
      text = compiled.sql;
      parameters = compiled.parameters;
    }
    return db.executeQuery<Row>(
      CompiledQuery.raw(
        text,
        parameters.map((p) => (p instanceof ValueSlot ? values[p.name] : p)),
      ),
    );
  };
}
