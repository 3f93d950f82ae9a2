// Store locations and temperature classes in the catalog file: how the file states them, the row
// errors of bad ones, what the import writes to the inventory rows (and what a file without them
// leaves there), and the picker's store-product lookup that reads them back.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCatalogImport, type CatalogFile, type ImportContext, type InventoryRow } from '../../db/catalog-import/file.js';
import { CatalogImportError, importCatalog } from '../../db/catalog-import/write.js';
import { findStoreInventory } from '../../db/queries/picking/catalog.js';
import { projectRoot } from '../../platform/config.js';
import { startTestService, type TestService } from '../support/service.js';
import { fixtureCatalog, P, STORE_A, STORE_B } from './fixture.js';

const LOCATION_COLUMNS = ['location_aisle', 'location_section', 'location_shelf', 'location_sequence', 'temperature_class'] as const;
const NOT_LOCATED = {
  location_aisle: null,
  location_section: null,
  location_shelf: null,
  location_sequence: null,
  temperature_class: 'ambient',
};

describe('the catalog file: locations and temperature classes', () => {
  const ctx: ImportContext = { stores: new Map([['S1', 'store-1']]), existingUnits: new Map([['pc', { kind: 'piece', ratio: '1.000' }]]) };
  const file = (inventory: Partial<InventoryRow>): CatalogFile => ({
    categories: [{ code: 'food', name: { ru: 'Еда', en: 'Food' }, color: '#FFFFFF' }],
    products: [
      {
        code: 'A',
        category: 'food',
        name: { ru: 'А', en: 'A' },
        inventories: [{ store: 'S1', unit: 'pc', stock: 1, price: '10', ...inventory }],
      },
    ],
  });
  const planned = (inventory: Partial<InventoryRow>) => {
    const r = planCatalogImport(file(inventory), ctx);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.plan.products[0]!.inventories[0]!;
  };
  const problems = (inventory: Record<string, unknown>) => {
    const r = planCatalogImport(file(inventory), ctx);
    return r.ok ? [] : r.problems.map((p) => `${p.row} | ${p.field} | ${p.message}`);
  };

  it('plans the location and class of an inventory row; a row without them is not located and ambient', () => {
    expect(planned({ aisle: ' 07 ', section: 'B', shelf: '3', sequence: '07-B-3', temperature_class: 'frozen' })).toMatchObject({
      location_aisle: '07',
      location_section: 'B',
      location_shelf: '3',
      location_sequence: '07-B-3',
      temperature_class: 'frozen',
    });
    expect(planned({})).toMatchObject(NOT_LOCATED);
    expect(planned({ aisle: null, section: null, shelf: null, sequence: null, temperature_class: null })).toMatchObject(NOT_LOCATED);
    expect(planned({ temperature_class: 'chilled' })).toMatchObject({ ...NOT_LOCATED, temperature_class: 'chilled' });
  });

  it('names a bad temperature class, a partial location and a route key that would not sort alike everywhere', () => {
    expect(problems({ temperature_class: 'warm' })).toEqual([
      'products[0] A | inventories[0].temperature_class | must be `ambient`, `chilled` or `frozen`',
    ]);
    expect(problems({ temperature_class: 'Chilled' })).toHaveLength(1);
    expect(problems({ aisle: '07', sequence: '07-B-3' })).toEqual([
      'products[0] A | inventories[0].section | is required with a location (aisle, section, shelf and sequence come together)',
      'products[0] A | inventories[0].shelf | is required with a location (aisle, section, shelf and sequence come together)',
    ]);
    expect(problems({ aisle: '07', section: 'B', shelf: '3', sequence: '07-b-3' })).toEqual([
      'products[0] A | inventories[0].sequence | may hold digits, capital Latin letters and - . / between them only',
    ]);
    expect(problems({ aisle: '07', section: 'B', shelf: 3, sequence: '07 B 3' })).toEqual([
      'products[0] A | inventories[0].shelf | must be a non-empty string',
      'products[0] A | inventories[0].sequence | may hold digits, capital Latin letters and - . / between them only',
    ]);
    expect(problems({ aisle: 'x'.repeat(33), section: 'B', shelf: '3', sequence: '07-B-3' })).toEqual([
      'products[0] A | inventories[0].aisle | must be at most 32 characters',
    ]);
  });
});

describe('importCatalog: locations', () => {
  let svc: TestService;
  let dir: string;
  beforeAll(async () => {
    svc = await startTestService();
    dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-locations-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await svc?.close();
  });

  const locationsOf = async (productId: string) =>
    svc.deps.db
      .selectFrom('inventories as i')
      .innerJoin('stores as s', 's.id', 'i.store_id')
      .innerJoin('measurement_units as u', 'u.id', 'i.unit_id')
      .select(['s.code as store', 'u.code as unit', ...LOCATION_COLUMNS.map((c) => `i.${c}` as const)])
      .where('i.product_id', '=', productId)
      .orderBy('s.code')
      .orderBy('u.code')
      .execute();

  /** The fixture with places for the milk (chilled, two stores) and the cheese (both units in one place). */
  const locatedFixture = () => {
    const file = fixtureCatalog();
    const [milk, , , , cheese] = file.products;
    Object.assign(milk!.inventories[0]!, { aisle: '04', section: 'A', shelf: '2', sequence: '04-A-2', temperature_class: 'chilled' });
    Object.assign(milk!.inventories[1]!, { aisle: '11', section: 'C', shelf: '1', sequence: '11-C-1', temperature_class: 'chilled' });
    for (const inv of cheese!.inventories)
      Object.assign(inv, { aisle: '05', section: 'D', shelf: '4', sequence: '05-D-4', temperature_class: 'chilled' });
    return file;
  };

  it('writes the file’s locations and classes to the inventory rows', async () => {
    await svc.deps.db.transaction().execute((trx) => importCatalog(trx, locatedFixture()));
    // By store code: Arbat (STORE_B), then Tverskaya (STORE_A).
    expect(await locationsOf(P.M1)).toEqual([
      {
        store: STORE_B!.code,
        unit: 'pc',
        location_aisle: '11',
        location_section: 'C',
        location_shelf: '1',
        location_sequence: '11-C-1',
        temperature_class: 'chilled',
      },
      {
        store: STORE_A!.code,
        unit: 'pc',
        location_aisle: '04',
        location_section: 'A',
        location_shelf: '2',
        location_sequence: '04-A-2',
        temperature_class: 'chilled',
      },
    ]);
    expect((await locationsOf(P.C1)).map((r) => [r.unit, r.location_sequence, r.temperature_class])).toEqual([
      ['g100', '05-D-4', 'chilled'],
      ['kg', '05-D-4', 'chilled'],
    ]);
    // Rows the file does not locate stay unlocated and ambient.
    expect(await locationsOf(P.S1)).toEqual([{ store: STORE_A!.code, unit: 'pc', ...NOT_LOCATED }]);
  });

  it('gives the picker’s store-product lookup the row’s location, which a picker’s added item copies', async () => {
    const milk = await svc.deps.db
      .selectFrom('inventories')
      .select('id')
      .where('product_id', '=', P.M1)
      .where('store_id', '=', STORE_A!.id)
      .executeTakeFirstOrThrow();
    expect(await findStoreInventory(svc.deps.db, STORE_A!.id, milk.id)).toMatchObject({
      location_aisle: '04',
      location_section: 'A',
      location_shelf: '2',
      location_sequence: '04-A-2',
      temperature_class: 'chilled',
    });
  });

  it('imports a file without locations: every row unlocated and ambient, the earlier places gone', async () => {
    await svc.deps.db.transaction().execute((trx) => importCatalog(trx, fixtureCatalog()));
    const rows = await svc.deps.db.selectFrom('inventories').select(LOCATION_COLUMNS).execute();
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) expect(row).toEqual(NOT_LOCATED);
  });

  it('reports a bad temperature class as a row error and imports nothing', async () => {
    const file = locatedFixture();
    Object.assign(file.products[0]!.inventories[1]!, { temperature_class: 'warm' });
    const error = await svc.deps.db
      .transaction()
      .execute((trx) => importCatalog(trx, file))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogImportError);
    expect((error as CatalogImportError).problems).toEqual([
      { row: 'products[0] T-M1', field: 'inventories[1].temperature_class', message: 'must be `ambient`, `chilled` or `frozen`' },
    ]);
    // The rest of the file was good, yet none of its places were written.
    expect((await locationsOf(P.C1)).every((r) => r.location_sequence === null)).toBe(true);

    // The command reports it the same way.
    const bad = path.join(dir, 'bad-class.json');
    writeFileSync(bad, JSON.stringify(file));
    const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/catalog-import.ts', bad], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: svc.database.url, LOG_LEVEL: 'silent' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('products[0] T-M1 inventories[1].temperature_class: must be `ambient`, `chilled` or `frozen`');
  }, 60_000);
});
