// The catalog import (`npm run catalog:import`) and the demo catalog it loads: the demo data's
// promised sizes and validity, all-or-nothing imports, withdrawals, stable ids, and the command
// itself run as a child process against this file's database.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogImportError, importCatalog } from '../../db/catalog-import/write.js';
import { demoCatalogFile } from '../../db/seed/catalog.js';
import { isValidGtin } from '../../domain/codes/barcode.js';
import { projectRoot } from '../../platform/config.js';
import { startTestService, type TestService } from '../support/service.js';
import { fixtureCatalog, P, STORE_A, storeHeaders } from './fixture.js';

let svc: TestService;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-import-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await svc?.close();
});

const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(svc.deps.db)).rows[0]!.n;
const runImport = (...args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/catalog-import.ts', ...args], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: svc.database.url, LOG_LEVEL: 'silent' },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );

describe('the demo catalog', () => {
  it('has 60 categories on 3 levels and 2,000 products, 200 of them weight-based, in 3 stores', async () => {
    const levels = await sql<{
      level: number;
      n: number;
    }>`SELECT level, count(*)::int AS n FROM categories WHERE is_active GROUP BY level ORDER BY level`.execute(svc.deps.db);
    expect(levels.rows).toEqual([
      { level: 0, n: 6 },
      { level: 1, n: 18 },
      { level: 2, n: 36 },
    ]);
    expect(await count(sql`SELECT count(*)::int AS n FROM products WHERE is_active`)).toBe(2000);
    expect(await count(sql`SELECT count(*)::int AS n FROM products WHERE is_active AND weight_based`)).toBe(200);
    expect(await count(sql`SELECT count(DISTINCT store_id)::int AS n FROM inventories`)).toBe(3);
    // Every product has Russian and English names and is sold somewhere.
    expect(
      await count(sql`SELECT count(*)::int AS n FROM products p WHERE name_ru !~ '[а-яА-ЯёЁ]' OR name_en ~ '[а-яА-ЯёЁ]'
      OR NOT EXISTS (SELECT 1 FROM inventories i WHERE i.product_id = p.id)`),
    ).toBe(0);
  });

  it('has valid EAN-13 barcodes on packaged goods and PLU codes on weight-based ones', async () => {
    const { rows } = await sql<{ barcode: string }>`SELECT barcode FROM product_barcodes`.execute(svc.deps.db);
    expect(rows.length).toBeGreaterThanOrEqual(1800);
    expect(rows.every((r) => r.barcode.length === 13 && isValidGtin(r.barcode))).toBe(true);
    expect(await count(sql`SELECT count(*)::int AS n FROM products WHERE weight_based AND plu IS NULL`)).toBe(0);
    expect(
      await count(
        sql`SELECT count(*)::int AS n FROM products p WHERE NOT weight_based AND NOT EXISTS (SELECT 1 FROM product_barcodes b WHERE b.product_id = p.id)`,
      ),
    ).toBe(0);
  });

  it('is the same file on every run (deterministic)', () => {
    expect(JSON.stringify(demoCatalogFile())).toBe(JSON.stringify(demoCatalogFile()));
    expect(demoCatalogFile({ products: 50 }).products).toHaveLength(50);
  });
});

describe('importCatalog', () => {
  it('imports nothing from a file with bad rows, and names every bad row', async () => {
    const file = demoCatalogFile();
    file.products[0]!.name.ru = 'Переименовано';
    file.products[4]!.inventories[0]!.price = '12.345';
    file.products[9]!.barcodes = ['4600000000001'];
    (file.products[12] as { category: string }).category = 'no-such-category';
    file.categories[3]!.color = 'green';
    const before = await count(sql`SELECT count(*)::int AS n FROM products WHERE name_ru = 'Переименовано'`);
    const error = await svc.deps.db
      .transaction()
      .execute((trx) => importCatalog(trx, file))
      .catch((e) => e);
    expect(error).toBeInstanceOf(CatalogImportError);
    expect((error as CatalogImportError).problems.map((p) => `${p.row} ${p.field}`)).toEqual([
      `categories[3] ${file.categories[3]!.code} color`,
      `products[4] ${file.products[4]!.code} inventories[0].price`,
      `products[9] ${file.products[9]!.code} barcodes[0]`,
      `products[12] ${file.products[12]!.code} category`,
    ]);
    expect(await count(sql`SELECT count(*)::int AS n FROM products WHERE name_ru = 'Переименовано'`)).toBe(before);
  });

  it('rejects a file that changes the id of an existing code', async () => {
    const file = fixtureCatalog();
    file.products[0]!.code = 'P000001'; // a demo product, with another id
    const error = await svc.deps.db
      .transaction()
      .execute((trx) => importCatalog(trx, file))
      .catch((e) => e);
    expect(error).toBeInstanceOf(CatalogImportError);
    expect((error as CatalogImportError).problems[0]).toMatchObject({ row: 'products P000001', field: 'id' });
  });
});

describe('npm run catalog:import', () => {
  it('reports the bad rows of a file and exits 1', async () => {
    const file = fixtureCatalog();
    file.products[1]!.inventories[0]!.unit = 'kg';
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(file));
    const r = await runImport(bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('1 problem(s); nothing was imported');
    expect(r.stderr).toContain('products[1] T-M2 inventories[0].unit: a piece product is sold in piece units');
    const notJson = path.join(dir, 'broken.json');
    writeFileSync(notJson, '{"categories": [');
    expect((await runImport(notJson)).stderr).toContain('cannot read a JSON document');
  }, 60_000);

  it('replaces the catalog with the file: withdraws what it does not list, keeps ids of what stays', async () => {
    const good = path.join(dir, 'fixture.json');
    writeFileSync(good, JSON.stringify(fixtureCatalog()));
    const r = await runImport(good, '--publish');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/products: 7,/);
    expect(r.stdout).toMatch(/withdrawn_products: 2000/);
    expect(r.stdout).toMatch(/published catalog version/);
    const listing = await svc.client.call.GET('/api/catalog/products/', { headers: storeHeaders(STORE_A!.id) });
    expect(listing.body.count).toBe(7);
    // The published snapshot holds the new catalog.
    const v = (await svc.client.call.GET('/api/catalog/version', { headers: storeHeaders(STORE_A!.id) })).body;
    const snapshot = await svc.client.call.GET('/api/catalog/bootstrap/{version}', {
      params: { path: { version: v.version } },
      headers: storeHeaders(STORE_A!.id),
    });
    expect(snapshot.body.products.map((p: { id: string }) => p.id).sort()).toEqual(Object.values(P).sort());

    const inventoryIds = async () =>
      (await svc.deps.db.selectFrom('inventories').select('id').where('product_id', '=', P.C1).orderBy('id').execute()).map((i) => i.id);
    const before = await inventoryIds();
    const changed = fixtureCatalog();
    changed.products[4]!.inventories[0]!.price = '999.00';
    await svc.deps.db.transaction().execute((trx) => importCatalog(trx, changed));
    expect(await inventoryIds()).toEqual(before);
    const cheese = await svc.client.call.GET('/api/catalog/products/{product_id}', {
      params: { path: { product_id: P.C1 } },
      headers: storeHeaders(STORE_A!.id),
    });
    expect(cheese.body.inventories[0].unit_price).toBe('999.00');
  }, 60_000);
});

describe('an import while checkouts hold inventory rows', () => {
  // Checkout, cancellation and picking lock inventory rows in id order (db/queries/orders.ts). An
  // import that took them in another order could hold a row such a transaction wants next while
  // waiting for one it holds: a deadlock, and one of the two fails.
  it('takes the inventory rows in id order, so it holds none past a row it waits for', async () => {
    const own = await startTestService(); // the demo catalog of the template
    const holder = new pg.Client(own.database.url);
    const prober = new pg.Client(own.database.url);
    try {
      const ids = (await own.deps.db.selectFrom('inventories').select('id').orderBy('id').execute()).map((r) => r.id);
      expect(ids.length).toBeGreaterThan(1000);
      const [lowest, highest] = [ids[0], ids[ids.length - 1]];
      await holder.connect();
      await prober.connect();
      // A checkout has locked its first row...
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM inventories WHERE id = $1 FOR UPDATE', [lowest]);
      // ...when an import of the same products starts, and waits for that row.
      const importing = own.deps.db.transaction().execute((trx) => importCatalog(trx, demoCatalogFile()));
      for (let waited = 0; ; waited += 20) {
        const { rows } = await prober.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (rows[0].n > 0) break;
        if (waited > 10_000) throw new Error('the import never waited for the held row');
        await new Promise((r) => setTimeout(r, 20));
      }
      // The import holds no other inventory row meanwhile...
      await prober.query('BEGIN');
      const free = await prober.query(
        'SELECT count(*)::int AS n FROM (SELECT id FROM inventories WHERE id <> $1 FOR UPDATE SKIP LOCKED) s',
        [lowest],
      );
      await prober.query('ROLLBACK');
      expect(free.rows[0].n).toBe(ids.length - 1);
      // ...so the checkout takes its next row and finishes, and then the import does.
      await holder.query('SELECT id FROM inventories WHERE id = $1 FOR UPDATE', [highest]);
      await holder.query('COMMIT');
      await expect(importing).resolves.toMatchObject({ inventories: ids.length });
    } finally {
      await holder.end().catch(() => {});
      await prober.end().catch(() => {});
      await own.close();
    }
  });
});
