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

/** `count` customers with an active session each, written in bulk; their ids and access tokens. */
export async function insertBenchCustomers(
  db: Database,
  tokens: TokenService,
  count: number,
): Promise<{ customerId: string; token: string }[]> {
  const rows = Array.from({ length: count }, () => ({ customerId: randomUUID(), sessionId: randomUUID() }));
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await db
      .insertInto('customers')
      .values(chunk.map((r) => ({ id: r.customerId, phone: null })))
      .execute();
    await db
      .insertInto('customer_preferences')
      .values(chunk.map((r) => ({ customer_id: r.customerId, language: 'en' as const })))
      .execute();
    await db
      .insertInto('auth_sessions')
      .values(
        chunk.map((r) => ({
          id: r.sessionId,
          principal_kind: 'customer' as const,
          customer_id: r.customerId,
          refresh_jti: randomUUID(),
          expires_at: new Date(Date.now() + 86_400_000),
        })),
      )
      .execute();
  }
  return rows.map((r) => ({ customerId: r.customerId, token: tokens.sign('customer_access', r.customerId, r.sessionId) }));
}
