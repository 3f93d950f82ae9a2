// Consistency rules of a checkout request (OrderInput and DeliveryPriceEstimateInput) that need
// no database: the type and its context, the delivery mode, change and payment method, duplicate
// lines, and the verdict on the lines once the store's facts are known.
import {
  decideAvailability,
  parseRequestedQuantity,
  QUANTITY_PROBLEMS,
  type AvailabilityReason,
  type QuantityUnit,
} from '../catalog/availability.js';
import { formatDecimal } from '../money/decimal.js';
import type { ErrorCode } from '../errors.js';

/** The codes of the request rules below (all refuse the request as it is: ERROR_STATUS says how). */
export type RuleCode = Extract<
  ErrorCode,
  | 'DELIVERY_MODE_INVALID'
  | 'DELIVERY_CONTEXT_REQUIRED'
  | 'PICKUP_CONTEXT_REQUIRED'
  | 'CHANGE_NOT_ALLOWED'
  | 'ONLINE_PAYMENT_DISABLED'
  | 'DUPLICATE_ITEM'
  | 'INVALID_CHANGE'
>;

export interface RuleViolation {
  code: RuleCode;
  detail: string;
}

export type DeliveryMode = 'express' | 'scheduled' | 'standard_without_slot';

/**
 * The delivery mode of a context: express (no slot) or scheduled (a slot). `allowNoSlot` is the
 * price estimate's extra case - standard delivery priced without choosing a slot.
 */
export function deliveryModeOf(ctx: { is_express?: boolean; slot_id?: string | null }, allowNoSlot: boolean): DeliveryMode | RuleViolation {
  const express = ctx.is_express === true;
  const slot = ctx.slot_id ?? null;
  if (express && slot === null) return 'express';
  if (!express && slot !== null) return 'scheduled';
  if (!express && allowNoSlot) return 'standard_without_slot';
  return {
    code: 'DELIVERY_MODE_INVALID',
    detail: express
      ? 'An express delivery has no slot: send slot_id null'
      : 'Choose a delivery slot (slot_id) or express delivery (is_express true)',
  };
}

export interface OrderInputShape {
  type: 'delivery' | 'pickup';
  payment_method: 'cash' | 'online';
  items: { product_id: string; unit_id: string; quantity: string | number }[];
  delivery_context?: { is_express?: boolean; slot_id?: string | null } | null;
  pickup_context?: { slot_id: string } | null;
  change?: string | number | null;
}

/** The first rule of OrderInput that the request breaks, or null. */
export function orderInputViolation(input: OrderInputShape, onlinePaymentEnabled: boolean): RuleViolation | null {
  if (input.type === 'delivery' && (!input.delivery_context || input.pickup_context)) {
    return { code: 'DELIVERY_CONTEXT_REQUIRED', detail: 'A delivery order needs delivery_context and no pickup_context' };
  }
  if (input.type === 'pickup' && (!input.pickup_context || input.delivery_context)) {
    return { code: 'PICKUP_CONTEXT_REQUIRED', detail: 'A pickup order needs pickup_context and no delivery_context' };
  }
  if (input.change !== undefined && input.change !== null && input.payment_method !== 'cash') {
    return { code: 'CHANGE_NOT_ALLOWED', detail: 'change is only for cash orders' };
  }
  if (input.payment_method === 'online' && !onlinePaymentEnabled) {
    return { code: 'ONLINE_PAYMENT_DISABLED', detail: 'Online payment is not available now; choose cash' };
  }
  const duplicate = duplicateLine(input.items);
  if (duplicate) return duplicate;
  if (input.type === 'delivery') {
    const mode = deliveryModeOf(input.delivery_context!, false);
    if (typeof mode !== 'string') return mode;
  }
  return null;
}

export function duplicateLine(items: readonly { product_id: string; unit_id: string }[]): RuleViolation | null {
  const seen = new Set<string>();
  for (const [i, line] of items.entries()) {
    const key = `${line.product_id.toLowerCase()}/${line.unit_id.toLowerCase()}`;
    if (seen.has(key)) return { code: 'DUPLICATE_ITEM', detail: `Line ${i + 1} repeats a product and unit of an earlier line; merge them` };
    seen.add(key);
  }
  return null;
}

/** The largest change banknote amount accepted (roubles): far above any real one, within what an order stores. */
export const CHANGE_MAX = 1_000_000;

/** The change banknote: a positive amount with at most two decimals, at most CHANGE_MAX. */
export function changeViolation(change: string | number | null | undefined): RuleViolation | null {
  if (change === undefined || change === null) return null;
  const text = typeof change === 'number' ? String(change) : change.trim();
  const m = /^([0-9]+)(?:\.([0-9]{1,2}))?$/.exec(text);
  if (!m || Number(text) < 0.01 || Number(text) > CHANGE_MAX) {
    return { code: 'INVALID_CHANGE', detail: 'change must be an amount from 0.01 to 1000000.00 with at most 2 decimals' };
  }
  return null;
}

// ------------------------------------------------------------------------------------------------
// Lines against the store

export interface LineFacts {
  productExists: boolean;
  unit: QuantityUnit | null;
  /** Null when the store does not sell the product in this unit. */
  inventory: { stock: string | null; orderQuantityLimit: string | null } | null;
}

export interface FailingLine {
  product_id: string;
  unit_id: string;
  requested_quantity: string;
  available_quantity: string;
  reason_code: AvailabilityReason;
}

export type LinesVerdict =
  | { ok: true; quantities: bigint[] }
  /** The request itself is wrong: a quantity breaks its product's rule. */
  | { ok: false; code: 'INVALID_QUANTITY'; detail: string }
  /** The store cannot serve the lines now (stock, limits, availability); `lines` says which. */
  | { ok: false; code: 'OUT_OF_STOCK' | 'LIMIT_EXCEEDED' | 'ITEM_UNAVAILABLE'; detail: string; lines: FailingLine[] };

const CODE_ORDER = ['OUT_OF_STOCK', 'LIMIT_EXCEEDED', 'ITEM_UNAVAILABLE'] as const;
const codeOf = (reason: AvailabilityReason): (typeof CODE_ORDER)[number] =>
  reason === 'OUT_OF_STOCK' ? 'OUT_OF_STOCK' : reason === 'LIMIT_EXCEEDED' ? 'LIMIT_EXCEEDED' : 'ITEM_UNAVAILABLE';

/**
 * Checkout's verdict on the lines, with the availability rule of POST .../check-availability:
 * every failing line is listed with its own reason, and `code` is the first of OUT_OF_STOCK,
 * LIMIT_EXCEEDED, ITEM_UNAVAILABLE that applies.
 */
/** Each line's quantity in thousandths, or the first line breaking the quantity rule (INVALID_QUANTITY). */
export function parseLineQuantities(
  lines: readonly { quantity: string | number }[],
  units: readonly (QuantityUnit | null)[],
): { ok: true; quantities: bigint[] } | { ok: false; detail: string } {
  const quantities: bigint[] = [];
  for (const [i, line] of lines.entries()) {
    const q = parseRequestedQuantity(line.quantity, units[i]!);
    if (!q.ok) return { ok: false, detail: `Line ${i + 1}: quantity ${JSON.stringify(line.quantity)} ${QUANTITY_PROBLEMS[q.problem]}` };
    quantities.push(q.thousandths);
  }
  return { ok: true, quantities };
}

export function judgeLines(
  lines: readonly { product_id: string; unit_id: string; quantity: string | number }[],
  facts: readonly LineFacts[],
): LinesVerdict {
  const parsed = parseLineQuantities(
    lines,
    facts.map((f) => f.unit),
  );
  if (!parsed.ok) return { ok: false, code: 'INVALID_QUANTITY', detail: parsed.detail };
  const { quantities } = parsed;
  const failing: FailingLine[] = [];
  for (const [i, line] of lines.entries()) {
    const verdict = decideAvailability(quantities[i]!, facts[i]!.productExists, facts[i]!.inventory);
    if (verdict.reason_code) {
      failing.push({
        product_id: line.product_id,
        unit_id: line.unit_id,
        requested_quantity: formatDecimal(quantities[i]!, 3),
        available_quantity: verdict.max_quantity,
        reason_code: verdict.reason_code,
      });
    }
  }
  if (!failing.length) return { ok: true, quantities };
  const code = CODE_ORDER.find((c) => failing.some((l) => codeOf(l.reason_code) === c))!;
  const detail = `${failing.length} line(s) cannot be ordered: ${failing.map((l) => l.reason_code).join(', ')}`;
  return { ok: false, code, detail, lines: failing };
}

/** Lines whose product is unknown or not sold in the store in this unit (the estimate's UNKNOWN_PRODUCT). */
export function unsoldLines(
  lines: readonly { product_id: string; unit_id: string }[],
  quantities: readonly bigint[],
  facts: readonly LineFacts[],
): FailingLine[] {
  return lines.flatMap((line, i) =>
    facts[i]!.productExists && facts[i]!.inventory
      ? []
      : [
          {
            product_id: line.product_id,
            unit_id: line.unit_id,
            requested_quantity: formatDecimal(quantities[i]!, 3),
            available_quantity: '0.000',
            reason_code: facts[i]!.productExists ? ('NOT_SOLD_IN_STORE' as const) : ('UNKNOWN_PRODUCT' as const),
          },
        ],
  );
}
