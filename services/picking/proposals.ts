// What the picker proposes to the customer on a line whose preference asks for approval: the
// line's preference as the rules read it, and the proposal an item command writes in its one
// statement (the decisions are services/picking/approvals.ts).
import { reserveApproval, type ApprovalRequest } from '../../db/queries/picking/approvals.js';
import { itemFacts, quantityText, type ItemRow, type ReplacementData } from '../../db/queries/picking/items.js';
import type { SessionHead } from '../../db/queries/picking/sessions.js';
import type { ApprovalRequestedData } from '../../db/queries/order-events.js';
import type { Executor } from '../../db/executor.js';
import type { ItemPreference } from '../../db/tables/approvals.js';
import { kopecks, lineTotal, money } from '../../domain/money/money.js';
import { proposedQuantity, type ApprovalKind, type LinePreference } from '../../domain/picking/approvals.js';
import type { ItemFacts } from '../../domain/picking/items.js';
import { itemApprovalView, type ApprovalRow } from '../presenters/approvals.js';

type Lang = 'ru' | 'en';

/** The line's preference as the rules read it (null: the order's absence_action applies). */
export function linePreference(item: Pick<ItemRow, 'replacement_preference'>): LinePreference | null {
  const p: ItemPreference | null = item.replacement_preference;
  if (!p) return null;
  return { policy: p.policy, productIds: p.products.map((n) => n.product_id), approvalRequired: p.approval_required };
}

/**
 * The proposal an item command makes for the customer's approval: what the customer is shown
 * (the substitute at the ordered quantity, or the product at the quantity recorded), its window
 * from the store, and the event that asks them.
 */
export async function proposal(
  db: Executor,
  p: {
    head: SessionHead;
    item: ItemRow;
    kind: ApprovalKind;
    next: ItemFacts;
    price: bigint;
    replacement: ReplacementData | undefined;
    at: Date;
  },
): Promise<{ request: ApprovalRequest; event: ApprovalRequestedData }> {
  const { item, kind } = p;
  if (item.order_item_id === null) throw new Error(`picking item ${item.id} has no order line to ask about`);
  const reserved = await reserveApproval(db, p.head.store_id);
  const product = kind === 'replacement' ? p.replacement! : substituteOf(item);
  const quantity = proposedQuantity(kind, p.next);
  const request: ApprovalRequest = {
    id: reserved.id,
    orderId: p.head.order_id,
    orderItemId: item.order_item_id,
    sessionId: p.head.id,
    pickingItemId: item.id,
    kind,
    proposed: {
      productId: product.product_id,
      nameRu: product.name_ru,
      nameEn: product.name_en,
      image: product.image_url,
      unitPrice: money(p.price),
      quantity: quantityText(quantity),
      lineTotal: money(lineTotal(quantity, p.price)),
    },
    requestedAt: p.at,
    expiresAt: new Date(p.at.getTime() + reserved.windowSeconds * 1000),
  };
  const row = approvalRowOf(request);
  const ordered = itemFacts(item).ordered;
  const original = (lang: Lang) => ({
    product_id: item.product_id,
    name: lang === 'ru' ? item.name_ru : item.name_en,
    unit_price: money(kopecks(item.unit_price)),
    quantity: quantityText(ordered),
    line_total: money(lineTotal(ordered, kopecks(item.unit_price))),
  });
  return {
    request,
    event: {
      approval: { ru: itemApprovalView(row, 'ru'), en: itemApprovalView(row, 'en') },
      original: { ru: original('ru'), en: original('en') },
    },
  };
}

/** The product an item is picked as: its chosen replacement, else the ordered product. */
function substituteOf(item: ItemRow): Pick<ReplacementData, 'product_id' | 'name_ru' | 'name_en' | 'image_url'> {
  if (item.replacement_product_id === null) {
    return { product_id: item.product_id, name_ru: item.name_ru, name_en: item.name_en, image_url: item.image_url };
  }
  return {
    product_id: item.replacement_product_id,
    name_ru: item.replacement_name_ru ?? item.name_ru,
    name_en: item.replacement_name_en ?? item.name_en,
    image_url: item.replacement_image_url,
  };
}

/** The row a request is inserted as (the customer's view of it, before the statement writes it). */
const approvalRowOf = (r: ApprovalRequest): ApprovalRow => ({
  id: r.id,
  order_id: r.orderId,
  order_item_id: r.orderItemId,
  session_id: r.sessionId,
  picking_item_id: r.pickingItemId,
  kind: r.kind,
  status: 'pending',
  decided_by: null,
  proposed_product_id: r.proposed.productId,
  proposed_name_ru: r.proposed.nameRu,
  proposed_name_en: r.proposed.nameEn,
  proposed_image: r.proposed.image,
  proposed_unit_price: r.proposed.unitPrice,
  proposed_quantity: r.proposed.quantity,
  proposed_line_total: r.proposed.lineTotal,
  requested_at: r.requestedAt,
  expires_at: r.expiresAt,
  decided_at: null,
});
