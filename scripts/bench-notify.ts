// What the outbox trigger's NOTIFY would cost order creation (not a test; run with
// `npx --no-install tsx scripts/bench-notify.ts`). A transaction that issued NOTIFY takes a
// database-wide lock at commit (PreCommit_Notify) and holds it until its commit is done, so
// committing notifiers run one at a time. Order creation (POST /api/orders/, as in
// scripts/bench-orders.ts) at 32 and 128 clients, both ways side by side in alternating rounds
// on one service: `notify` - the insert trigger's NOTIFY in the writing transaction (migration
// 0001's trigger, put back for the round); `none` - no trigger: the wake-up after the commit, on
// the pool (db/connection.ts; it runs in both rounds, so `notify` also pays the wake-up's small
// cost). On a throwaway cluster (fsync and synchronous commit off, as every benchmark) and on a
// durable one (on, as `npm start` and production). Medians of BENCH_ROUNDS rounds (3) of BENCH_SECONDS (5) each.
// BENCH_DURABLE=0 / =1 runs only one of the two clusters.
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { benchOrders, notifyTrigger } from './bench-orders.js';
import { openBenchDatabase } from './lib/bench-database.js';
import { startBenchService } from './lib/bench-service.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIENTS = [32, 128];
const MODES = ['notify', 'none'] as const;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(durable: boolean): Promise<void> {
  const label = durable ? 'durable' : 'throwaway';
  const database = await openBenchDatabase('grocery_bench_notify', { durable });
  const handle = connect(database.url, { max: 4 });
  const service = await (async () => {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
    return startBenchService(database.url);
  })();
  try {
    const rates = new Map<string, number[]>();
    for (let round = 1; round <= rounds; round++) {
      // Alternate which mode goes first, so a drift of the machine hits both alike.
      const order = round % 2 ? MODES : [...MODES].reverse();
      for (const clients of CLIENTS) {
        for (const mode of order) {
          await notifyTrigger(handle.db, mode === 'notify');
          const r = await benchOrders(service, handle.db, seconds, clients, false);
          const key = `${clients}/${mode}`;
          rates.set(key, [...(rates.get(key) ?? []), r.orders]);
          console.log(`${label} round ${round}: ${clients} clients, ${mode.padEnd(6)} ${Math.round(r.orders)} orders/s (p99 ${r.p99} ms)`);
        }
      }
    }
    for (const clients of CLIENTS) {
      const withNotify = median(rates.get(`${clients}/notify`)!);
      const without = median(rates.get(`${clients}/none`)!);
      const cost = 1 - withNotify! / without!;
      console.log(
        `${label}, ${clients} clients: ${Math.round(withNotify!)} orders/s with the NOTIFY trigger (old), ${Math.round(without!)} with the wake-up after commit (new) (cost ${(cost * 100).toFixed(1)} %; medians of ${rounds})`,
      );
      console.log(`figure order-creation-notify-cost-${label}-${clients} ${cost.toFixed(3)}`);
    }
  } finally {
    await notifyTrigger(handle.db, false).catch(() => {});
    await service.stop();
    await handle.close();
    await database.close();
  }
}

console.log(`node ${process.version}; ${rounds} rounds of ${seconds} s per figure`);
if (process.env.BENCH_DURABLE !== '1') await measure(false);
if (process.env.BENCH_DURABLE !== '0') await measure(true);
process.exit(0);
