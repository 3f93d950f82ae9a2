// The demo stores' layout: every inventory row located, an aisle per department, the route taking
// ambient goods first and frozen ones last, and the picker's items carrying those places.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCatalogFile } from '../../db/seed/catalog.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { compareSequence } from '../../domain/picking/batching.js';
import { command, createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const CLASS_RANK = { ambient: 0, chilled: 1, frozen: 2 } as const;

interface Located {
  store_id: string;
  product_id: string;
  department: string;
  category: string;
  location_aisle: string | null;
  location_section: string | null;
  location_shelf: string | null;
  location_sequence: string | null;
  temperature_class: keyof typeof CLASS_RANK;
}

const demoRows = async () =>
  (
    await sql<Located>`
      SELECT i.store_id, i.product_id, root.code AS department, c.code AS category, i.location_aisle, i.location_section,
             i.location_shelf, i.location_sequence, i.temperature_class
      FROM inventories i
      JOIN products p ON p.id = i.product_id
      JOIN categories c ON c.id = p.category_id
      JOIN categories root ON root.id = c.ancestor_ids[1]`.execute(svc.deps.db)
  ).rows;

describe('the demo stores’ layout', () => {
  it('locates every inventory row: aisle, section and shelf, and a route key made of them', async () => {
    const rows = await demoRows();
    const { rows: all } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM inventories`.execute(svc.deps.db);
    expect(rows.length).toBe(all[0]!.n);
    for (const r of rows) {
      expect(r.location_sequence).toMatch(/^\d{2}-[A-Z]-[1-9]$/);
      expect(r.location_sequence).toBe(`${r.location_aisle}-${r.location_section}-${r.location_shelf}`);
    }
    // A product's units (pieces and packs, kg and 100 g) stand in one place.
    const places = new Map<string, Set<string>>();
    for (const r of rows) {
      const key = `${r.store_id}/${r.product_id}`;
      places.set(key, (places.get(key) ?? new Set()).add(r.location_sequence!));
    }
    expect([...places.values()].every((p) => p.size === 1)).toBe(true);
  });

  it('has one department per aisle, kept as its goods need: dairy, meat and fish, ready meals chilled; seafood frozen', async () => {
    const rows = await demoRows();
    for (const store of DEMO_STORES) {
      const departments = new Map<string, Set<string>>();
      for (const r of rows.filter((x) => x.store_id === store.id))
        departments.set(r.location_aisle!, (departments.get(r.location_aisle!) ?? new Set()).add(`${r.department} ${r.temperature_class}`));
      expect([...departments.values()].every((d) => d.size === 1)).toBe(true);
      expect(departments.size).toBe(7); // 6 departments, meat and fish in two aisles (chilled, frozen)
    }
    const classes = new Map<string, Set<string>>();
    for (const r of rows) classes.set(r.department, (classes.get(r.department) ?? new Set()).add(r.temperature_class));
    expect(Object.fromEntries([...classes].map(([d, c]) => [d, [...c].sort()]))).toEqual({
      produce: ['ambient'],
      bakery: ['ambient'],
      grocery: ['ambient'],
      dairy: ['chilled'],
      kitchen: ['chilled'],
      'meat-fish': ['chilled', 'frozen'],
    });
    expect(new Set(rows.filter((r) => r.temperature_class === 'frozen').map((r) => r.category))).toEqual(new Set(['seafood']));
  });

  it('walks each store’s ambient goods first, then the chilled, the frozen last, in the service’s and the database’s order alike', async () => {
    const rows = await demoRows();
    for (const store of DEMO_STORES) {
      const route = rows.filter((r) => r.store_id === store.id).sort((a, b) => compareSequence(a.location_sequence, b.location_sequence));
      const ranks = route.map((r) => CLASS_RANK[r.temperature_class]);
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      expect(new Set(ranks)).toEqual(new Set([0, 1, 2]));
      // The database sorts the keys as the service does (whatever its collation).
      const { rows: inSql } = await sql<{ s: string }>`
        SELECT DISTINCT location_sequence AS s FROM inventories WHERE store_id = ${store.id} ORDER BY location_sequence`.execute(
        svc.deps.db,
      );
      expect(inSql.map((r) => r.s)).toEqual([...new Set(route.map((r) => r.location_sequence))]);
    }
    // The stores' floor plans differ: their first aisles hold different departments.
    const firstDepartments = DEMO_STORES.map((s) => rows.find((r) => r.store_id === s.id && r.location_aisle === '01')!.department);
    expect(new Set(firstDepartments).size).toBe(DEMO_STORES.length);
  });

  it('locates the rows of the large generated catalog the same way', () => {
    const file = demoCatalogFile({ products: 20_000 });
    const inventories = file.products.flatMap((p) => p.inventories);
    expect(inventories.every((i) => /^\d{2}-[A-Z]-[1-5]$/.test(i.sequence ?? '') && i.temperature_class)).toBe(true);
    expect(new Set(inventories.map((i) => i.shelf))).toEqual(new Set(['1', '2', '3', '4', '5']));
  });
});

describe('the items a picker adds', () => {
  it('carry the location and temperature class of the product’s inventory row, as the order’s lines do', async () => {
    const store = DEMO_STORES[0]!;
    const [line] = await stockedProducts(svc, { weight: false, count: 1 });
    // A frozen product, so that the class copied is not merely the default.
    const { rows: frozen } = await sql<{ id: string }>`
      SELECT i.id FROM inventories i JOIN products p ON p.id = i.product_id
      WHERE i.store_id = ${store.id} AND i.is_default AND NOT p.weight_based AND i.stock >= 5 AND i.temperature_class = 'frozen'
      ORDER BY p.code LIMIT 1`.execute(svc.deps.db);
    const picker = await createPicker(svc, [store.id]);
    const order = await createConfirmedOrder(svc, { lines: [{ inventoryId: line!.inventoryId, quantity: '1' }] });
    await startPicking(svc, picker, order.orderId);
    const added = await svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
      params: { path: { order_id: order.orderId } },
      headers: command(picker.auth),
      body: { inventory_id: frozen[0]!.id, quantity: '1' },
    });
    expect(added.status).toBe(200);
    const { rows } = await sql<{ line: boolean; same: boolean; sequence: string | null; class: string }>`
      SELECT si.order_item_id IS NOT NULL AS line, si.location_sequence AS sequence, si.temperature_class AS class,
             (si.location_aisle, si.location_section, si.location_shelf, si.location_sequence, si.temperature_class)
               = (i.location_aisle, i.location_section, i.location_shelf, i.location_sequence, i.temperature_class) AS same
      FROM picking_items si
      JOIN picking_sessions s ON s.id = si.session_id
      JOIN inventories i ON i.id = si.inventory_id
      WHERE s.order_id = ${order.orderId}
      ORDER BY si.position`.execute(svc.deps.db);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.sequence).not.toBeNull();
      expect(r.same).toBe(true);
    }
    expect(rows.map((r) => r.line)).toEqual([true, false]);
    expect(rows[1]!.class).toBe('frozen');
  });
});
