// npm run fault:db-outage: a 10 s outage of the embedded PostgreSQL under checkout load, then a
// SIGKILL of the service (scripts/lib/db-outage.ts says exactly what is done). Prints what the
// clients saw; exits non-zero when a target is missed (401s, lost or duplicated orders, keys
// left in progress, no recovery). FAULT_OUTAGE_SECONDS and FAULT_LANES change the defaults.
import { runDatabaseOutage } from './lib/db-outage.js';

const outageSeconds = Number(process.env.FAULT_OUTAGE_SECONDS ?? 10);
const lanes = Number(process.env.FAULT_LANES ?? 16);
const r = await runDatabaseOutage({ outageSeconds, lanes, progress: (line) => console.log(`# ${line}`) });
const during = r.duringOutage;
console.log(`requests sent during the ${outageSeconds} s database outage: ${during.sent}`);
console.log(`  answered 401: ${during.byStatus['401'] ?? 0} (target 0)`);
console.log(`  answered 503: ${during.byStatus['503'] ?? 0}`);
console.log(
  `  other answers: ${JSON.stringify(Object.fromEntries(Object.entries(during.byStatus).filter(([s]) => s !== '401' && s !== '503')))} (0: no answer)`,
);
console.log(
  `acknowledged orders (201): ${r.acknowledged} of ${r.requests} requests; lost after the outage and a SIGKILL of the service: ${r.lostAcknowledged} (target 0)`,
);
console.log(`orders without lines: ${r.ordersWithoutLines}; idempotency keys left in progress: ${r.keysInProgress}`);
console.log(
  `seconds to recover after PostgreSQL is back (to the first 201): ${r.recoverySeconds ?? 'did not recover'}; postmaster restarts by the service: ${r.supervisorRestarts}`,
);
const retry = r.retryAfterServiceKill;
console.log(
  `after SIGKILL of the service and a new start, every request retried with its own key: ${retry.retried}; acknowledged ones answering their original order: ${retry.sameOrder} of ${r.acknowledged}; other answers ${JSON.stringify(retry.otherAnswers)}; keys with two orders: ${retry.duplicateOrdersForOneKey}`,
);
console.log(`all answers: ${JSON.stringify(r.allByStatus)}`);
const failed =
  (during.byStatus['401'] ?? 0) > 0 ||
  r.lostAcknowledged > 0 ||
  r.ordersWithoutLines > 0 ||
  r.keysInProgress > 0 ||
  r.recoverySeconds === null ||
  retry.sameOrder !== r.acknowledged ||
  retry.duplicateOrdersForOneKey > 0;
process.exit(failed ? 1 : 0);
