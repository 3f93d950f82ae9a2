// Signed-in pickers for the benchmarks: a picker of one store and an auth session the service
// accepts, written straight into the bench database (no sign-in round trips before a measurement).
import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/connection.js';
import type { TokenService } from '../../platform/tokens.js';

/** A picker working in `storeId`, signed in: its id and its `Authorization` value. */
export async function insertBenchPicker(
  db: Database,
  tokens: TokenService,
  storeId: string,
  login: string,
): Promise<{ id: number; auth: string }> {
  const picker = await db
    .insertInto('pickers')
    .values({ login, display_name: login, password_hash: 'not-used', default_store_id: storeId })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('picker_stores').values({ picker_id: picker.id, store_id: storeId }).execute();
  const sessionId = randomUUID();
  await db
    .insertInto('auth_sessions')
    .values({
      id: sessionId,
      principal_kind: 'picker',
      picker_id: picker.id,
      refresh_jti: randomUUID(),
      expires_at: new Date(Date.now() + 86_400_000),
    })
    .execute();
  return { id: picker.id, auth: `Bearer ${tokens.sign('picker_access', String(picker.id), sessionId)}` };
}
