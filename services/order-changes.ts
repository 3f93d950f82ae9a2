// Changing an order's lines before picking (POST /api/orders/{order_id}/items/changes): all the
// changes or none, retry-safe under the Idempotency-Key, at the order's expected version, and only
// while no picker has started it. The order row is locked as a picker's start locks it, so a
// change and a start serialize: the session is built from the changed lines, or the change finds
// the order `picking`. Stock is held and given back, lines priced and the rules of checkout
// checked as at checkout; an online payment is settled for the new total.
import { findDeliveryTerms } from '../db/queries/logistics.js';
import { recordOrderChange, type OrderChange } from '../db/queries/order-events.js';
import {
  changePairFacts,
  lockChangeStock,
  recordQueueCardUpdated,
  writeOrderLinesChange,
  type AddedLineRow,
  type ChangedLineRow,
  type ChangePairFacts,
  type LockedStock,
} from '../db/queries/order-changes.js';
import {
  findCustomerOrder,
  listOrderItems,
  lockCustomerOrderForChange,
  updateOrder,
  type OrderItemRow,
  type OrderRow,
} from '../db/queries/orders.js';
import { differencesReturned, enqueueProviderCommand, findOpenInvoice, findPaidInvoices } from '../db/queries/payments.js';
import type { Executor } from '../db/executor.js';
import type { components } from '../generated/api.test.js';
import { quantityUnit } from '../domain/catalog/availability.js';
import { formatDecimal, parseDecimal } from '../domain/money/decimal.js';
import { kopecks, money } from '../domain/money/money.js';
import {
  breaksExpressLimit,
  breaksMinimum,
  changeability,
  changeListViolation,
  changeOutcome,
  linesAfter,
  planChange,
  readPricedLines,
  settleNewTotal,
  stockVerdict,
  type ChangeLineFacts,
  type ChangeOutcome,
  type OrderLine,
  type PaymentSettlement,
} from '../domain/orders/order-change.js';
import type { Lang } from '../domain/texts/orders.js';
import { BankRefusedError, BankUnavailableError } from '../platform/providers/bank/index.js';
import { assertNamedProducts, orderMinimum, preferenceColumns } from './checkout.js';
import type { AppDeps } from './deps.js';
import { appError, conflict, notFound, unprocessable } from './errors.js';
import { fingerprintOf, withIdempotency } from './idempotency.js';
import { withdrawInvoice } from './order-lifecycle.js';
import { orderDetailOf } from './orders.js';
import { issueInvoice } from './payments.js';
import type { OrderDetail } from './presenters/orders.js';

type OrderChangeInput = components['schemas']['OrderChangeInput'];

export interface OrderChangeRequest {
  customerId: string;
  orderId: string;
  /** Idempotency-Key as sent (null when absent: refused, a change needs one). */
  idempotencyKey: string | null;
  /** X-Expected-Version: the order_version the change was prepared on. */
  expectedVersion: number;
  body: OrderChangeInput;
  lang: Lang;
}

/**
 * Applies the changes to the caller's order and answers the order as it is after them. The
 * well-formedness of the list is judged before the key (as checkout judges its body); everything
 * else inside the key's transaction, whose refusals (409/422) are stored as the key's answer.
 */
export async function changeOrderItems(
  deps: Pick<AppDeps, 'db' | 'clock' | 'config' | 'bank'>,
  r: OrderChangeRequest,
): Promise<OrderDetail> {
  if (!r.idempotencyKey) throw unprocessable('IDEMPOTENCY_KEY_REQUIRED', 'Send an Idempotency-Key header (one key per change)');
  const violation = changeListViolation(r.body.changes);
  if (violation) throw unprocessable(violation.code, violation.detail);
  const orderId = r.orderId.toLowerCase();
  const scope = { principal: `customer:${r.customerId}`, operationId: 'changeOrderItems', key: r.idempotencyKey };
  const reply = await withIdempotency(deps, scope, fingerprintOf(orderId, r.body, r.expectedVersion), async (trx) => ({
    status: 200 as const,
    body: await applyChange(trx, deps, { ...r, orderId }),
  }));
  return reply.body;
}

const toOrderLine = (row: OrderItemRow): OrderLine => ({
  id: row.id,
  productId: row.product_id,
  unitId: row.unit_id,
  inventoryId: row.inventory_id,
  quantity: parseDecimal(row.quantity, 3)!,
  unitPrice: row.unit_price,
  oldPrice: row.old_price,
  lineTotal: row.line_total,
  preference: { policy: row.replacement_policy, productIds: row.replacement_product_ids, approvalRequired: row.replacement_approval },
});

/** The store's facts of a priced pair, its stock as locked (a row created after the lock is not one to sell from). */
const lineFactsOf = (f: ChangePairFacts, locked: ReadonlyMap<string, LockedStock>): ChangeLineFacts => {
  const row = f.inventory_id ? locked.get(f.inventory_id) : undefined;
  return {
    productExists: f.product_exists,
    unit: quantityUnit(f),
    inventory: row
      ? { id: row.id, stock: row.stock, orderQuantityLimit: row.order_quantity_limit, unitPrice: row.unit_price, oldPrice: row.old_price }
      : null,
  };
};

async function applyChange(trx: Executor, deps: Pick<AppDeps, 'clock' | 'config' | 'bank'>, r: OrderChangeRequest): Promise<OrderDetail> {
  const now = deps.clock.now();
  const o = await lockCustomerOrderForChange(trx, r.orderId, r.customerId);
  if (!o) throw notFound('No order with this id');
  // Before the version: a start of picking raised it too, and the loser of that race is told why.
  const can = changeability(o.status, o.picking_started);
  if (can === 'PICKING_STARTED') throw conflict('PICKING_STARTED', `Picking of order ${o.no} has begun; it can no longer be changed`);
  if (can === 'ORDER_NOT_CHANGEABLE')
    throw conflict('ORDER_NOT_CHANGEABLE', `Order ${o.no} is ${o.status}; its lines can no longer be changed`);
  if (o.order_version !== r.expectedVersion)
    throw conflict('VERSION_CONFLICT', `The order is at version ${o.order_version}, not ${r.expectedVersion}; re-read it`);

  const rows = await listOrderItems(trx, o.id);
  const plan = planChange(r.body.changes, rows.map(toOrderLine));
  if ('code' in plan) throw unprocessable(plan.code, plan.detail);

  // The stock rows first (in id order, after the order's, as cancellation takes them), then the
  // catalog facts of the pairs priced anew.
  const pairs = plan.priced.map((p) => ({ productId: p.productId, unitId: p.unitId }));
  const held = [...plan.removed, ...plan.priced.flatMap((p) => (p.line ? [p.line] : []))].flatMap((l) =>
    l.inventoryId ? [l.inventoryId] : [],
  );
  const locked = await lockChangeStock(trx, o.store_id, pairs, held);
  const pairFacts = await changePairFacts(trx, o.store_id, pairs);
  const read = readPricedLines(
    plan.priced,
    pairFacts.map((f) => lineFactsOf(f, locked)),
  );
  if (!read.ok) {
    if (read.code === 'INVALID_QUANTITY') throw unprocessable(read.code, read.detail);
    throw unprocessable(read.code, read.detail, { extra: { lines: read.lines } });
  }
  // Only preferences given now are judged: a kept one was judged when it was given.
  await assertNamedProducts(trx, o.store_id, [
    ...read.lines
      .filter((l) => !l.request.line)
      .map((l) => ({ productId: l.request.productId, unitId: l.request.unitId, quantity: l.quantity, preference: l.request.preference })),
    ...plan.repreferred.map(({ line, preference }) => ({
      productId: line.productId,
      unitId: line.unitId,
      quantity: line.quantity,
      preference,
    })),
  ]);

  if (o.type === 'delivery' && o.is_express) {
    const max = (await findDeliveryTerms(trx, o.store_id))?.express_max_items_count ?? null;
    if (breaksExpressLimit(rows.length, linesAfter(plan), max))
      throw unprocessable('EXPRESS_ITEMS_LIMIT', `Express delivery takes at most ${max} lines`);
  }
  const stock = stockVerdict(read.lines);
  if (stock) throw appError(stock.code, stock.detail, { extra: { lines: stock.lines } });
  const outcome = changeOutcome(plan, read.lines);
  const minimum = await orderMinimum(trx, o);
  if (breaksMinimum(kopecks(o.goods_total), outcome.goodsTotal, minimum.minimum))
    throw unprocessable('BELOW_MINIMUM_ORDER', minimum.refusal(outcome.goodsTotal));

  const total = outcome.goodsTotal + kopecks(o.delivery_cost);
  const written = await writeOrderLinesChange(trx, {
    orderId: o.id,
    stock: outcome.stock.map((s) => ({ inventoryId: s.inventoryId, quantity: formatDecimal(s.delta, 3) })),
    removedIds: outcome.removedIds,
    changed: changedRows(plan.repreferred, outcome),
    added: addedRows(outcome, pairFacts, Math.max(0, ...rows.map((row) => row.line_no))),
    totals: { goods_total: money(outcome.goodsTotal), total_price: money(total), items_count: outcome.linesCount },
  });
  if (!written.stocked) throw conflict('OUT_OF_STOCK', 'Not enough stock', { extra: { lines: [] } });

  const settlement = await settlePayment(trx, deps, o, total, r.lang, now);
  const changes: OrderChange[] = ['items', ...(settlement.kind === 'none' ? [] : (['payment'] as const))];
  await recordOrderChange(trx, o.id, changes, { now });
  // A card in the store's picking queue shows the lines: its pickers re-read it.
  if (o.status === 'confirmed') await recordQueueCardUpdated(trx, { orderId: o.id, storeId: o.store_id, now });
  return orderDetailOf(trx, deps, (await findCustomerOrder(trx, o.id, r.customerId))!, r.lang);
}

/** The kept lines the change rewrites: those set anew, and those whose preference alone changes. */
function changedRows(
  repreferred: readonly { line: OrderLine; preference: OrderLine['preference'] }[],
  outcome: ChangeOutcome,
): ChangedLineRow[] {
  return [
    ...outcome.priced.flatMap((p) =>
      p.lineId === null
        ? []
        : [
            {
              id: p.lineId,
              inventory_id: p.inventoryId,
              quantity: p.quantity,
              unit_price: p.unitPrice,
              old_price: p.oldPrice,
              line_total: p.lineTotal,
              ...preferenceColumns(p.preference),
            },
          ],
    ),
    ...repreferred.map(({ line, preference }) => ({
      id: line.id,
      inventory_id: line.inventoryId,
      quantity: formatDecimal(line.quantity, 3),
      unit_price: line.unitPrice,
      old_price: line.oldPrice,
      line_total: line.lineTotal,
      ...preferenceColumns(preference),
    })),
  ];
}

/** The added lines as order lines, numbered after the order's last, with the catalog's names as at checkout. */
function addedRows(outcome: ChangeOutcome, facts: readonly ChangePairFacts[], lastLineNo: number): AddedLineRow[] {
  let lineNo = lastLineNo;
  // outcome.priced is in the order of the priced pairs, as `facts` are.
  return outcome.priced.flatMap((p, i) => {
    if (p.lineId !== null) return [];
    const f = facts[i]!;
    lineNo += 1;
    return [
      {
        line_no: lineNo,
        product_id: p.productId,
        unit_id: p.unitId,
        inventory_id: p.inventoryId,
        name_ru: f.name_ru!,
        name_en: f.name_en!,
        unit_name_ru: f.unit_name_ru!,
        unit_name_en: f.unit_name_en!,
        image: f.image,
        barcode: f.barcode,
        plu_code: f.plu,
        weight_based: f.weight_based ?? false,
        weight: f.weight ?? '0',
        quantity: p.quantity,
        unit_price: p.unitPrice,
        old_price: p.oldPrice,
        line_total: p.lineTotal,
        ...preferenceColumns(p.preference),
      },
    ];
  });
}

/**
 * Settles an online order's payment for its new total, as re-pricing after picking does: a paid
 * order paid for more than the new total gets the difference back on the card, one paid for less
 * awaits the difference again through a new invoice; an order not paid yet has its open invoice
 * replaced by one for the new total. An invoice the bank cannot issue now is issued by the next
 * GET of the order's invoice instead: the change stands either way.
 */
async function settlePayment(
  trx: Executor,
  deps: Pick<AppDeps, 'config' | 'bank'>,
  o: OrderRow,
  newTotal: bigint,
  lang: Lang,
  now: Date,
): Promise<PaymentSettlement> {
  const paid = o.payment_method === 'online' ? await findPaidInvoices(trx, o.id) : [];
  const returned = paid.length ? kopecks(await differencesReturned(trx, o.id)) : 0n;
  const settlement = settleNewTotal(
    { paymentMethod: o.payment_method, paymentStatus: o.payment_status, oldTotal: kopecks(o.total_price), newTotal },
    { any: paid.length > 0, net: paid.reduce((sum, i) => sum + kopecks(i.amount), 0n) - returned },
  );
  if (settlement.kind === 'none') return settlement;

  // Whatever the open invoice asked for is no longer what is due.
  const open = await findOpenInvoice(trx, o.id);
  if (open) await withdrawInvoice(trx, o.id, open, 'cancelled');
  const issue = async (amount: bigint, ofDifference: boolean, paymentDueAt: Date | null) => {
    try {
      await issueInvoice(trx, deps, { ...o, payment_due_at: paymentDueAt }, { amount: money(amount), ofDifference, now, lang });
    } catch (err) {
      if (!(err instanceof BankUnavailableError || err instanceof BankRefusedError)) throw err;
    }
  };
  switch (settlement.kind) {
    case 'unpaid':
      if (open) await issue(newTotal, false, o.payment_due_at);
      break;
    case 'refund':
      await enqueueProviderCommand(trx, 'bank.refund', o.id, { amount: money(settlement.amount) });
      await updateOrder(trx, o.id, { payment_status: 'paid' });
      break;
    case 'settled':
      await updateOrder(trx, o.id, { payment_status: 'paid' });
      break;
    case 'collect':
      // No deadline, as after picking: the order keeps its place in the queue meanwhile.
      await updateOrder(trx, o.id, { payment_status: 'awaiting', payment_due_at: null });
      await issue(settlement.amount, true, null);
      break;
  }
  return settlement;
}
