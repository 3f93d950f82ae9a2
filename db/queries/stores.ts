import type { Executor } from '../executor.js';

export function findActiveStore(db: Executor, id: string) {
  return db.selectFrom('stores').selectAll().where('id', '=', id).where('is_active', '=', true).executeTakeFirst();
}
