// X-Store-Id is read on most requests, so a process keeps an active store's row for
// STORE_CACHE_SECONDS (handlers/support/store.ts): a deactivated store is refused once that
// window has passed, an unknown id is never remembered (a new store is served at once).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { loadFixture, STORE_A, storeHeaders } from './fixture.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { STORE_CACHE_SECONDS: '1' } });
  await loadFixture(svc);
});
afterAll(() => svc?.close());

const roots = (storeId: string) => svc.client.call.GET('/api/catalog/groups/categories/root', { headers: storeHeaders(storeId) });

describe('the store of X-Store-Id', () => {
  it('is reused for the cache window after a deactivation, then refused', async () => {
    expect((await roots(STORE_A!.id)).status).toBe(200);
    await svc.deps.db.updateTable('stores').set({ is_active: false }).where('id', '=', STORE_A!.id).execute();
    // Within the window the remembered row still answers.
    expect((await roots(STORE_A!.id)).status).toBe(200);
    svc.clock.advance(1100);
    const refused = await roots(STORE_A!.id);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('STORE_NOT_FOUND');
    await svc.deps.db.updateTable('stores').set({ is_active: true }).where('id', '=', STORE_A!.id).execute();
  });

  it('is looked up again when it was not found, so a store opened a moment ago is served', async () => {
    const id = randomUUID();
    expect((await roots(id)).body.code).toBe('STORE_NOT_FOUND');
    await svc.deps.db
      .insertInto('stores')
      .values({
        ...(await svc.deps.db.selectFrom('stores').selectAll().where('id', '=', STORE_A!.id).executeTakeFirstOrThrow()),
        id,
        code: `NEW-${id.slice(0, 8)}`,
      })
      .execute();
    expect((await roots(id)).status).toBe(200);
  });
});
