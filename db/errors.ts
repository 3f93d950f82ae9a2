// What PostgreSQL's errors mean to the queries that expect them.

/** Whether `err` is PostgreSQL refusing a row for the unique index or constraint `constraint` (SQLSTATE 23505). */
export function isUniqueViolationOf(err: unknown, constraint: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}
