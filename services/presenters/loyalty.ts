// The one mapper of each loyalty resource from its rows (and the provider's data) to the
// contract's shape: the wallet, link previews, programs, purchases with their receipt positions,
// transactions and the cart's discount preview.
import type { components } from '../../generated/api.test.js';
import type { orderLines, PurchaseRow, ReportedTransaction, TransactionRow, WalletRow } from '../../db/queries/loyalty.js';
import type { StoredDiscount, StoredPosition } from '../../db/tables/loyalty.js';
import type { ProviderCardLookup, ProviderProgram } from '../../platform/providers/loyalty/index.js';
import { isUuid } from '../../domain/ids.js';
import { kopecks, money, normalizeMoney, QUANTITY_SCALE } from '../../domain/money/money.js';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import type { CartPreview, LoyaltyMember } from '../../domain/loyalty/accrual.js';
import { maskCardNumber, orderCards, pollAfterSeconds, walletControls, type LinkDecision } from '../../domain/loyalty/wallet.js';
import type { ResultPosition } from '../../domain/picking/result.js';
import {
  BLOCK_REASONS,
  baseAccrualName,
  blockReasonLabel,
  linkPreviewMessage,
  message,
  syncErrorMessage,
  transactionDescription,
  type Lang,
  type MessageKey,
} from '../../domain/texts/loyalty.js';
import { mainCardOf } from '../loyalty/wallet.js';

type Schemas = components['schemas'];
export type WalletBody = Schemas['WalletSchema'];
export type WalletWrapperBody = Schemas['WalletWrapperSchema'];
export type Outcome = 'applied' | 'accepted' | 'unchanged';

// ---- the wallet -------------------------------------------------------------------------------

/** The one mapper of a wallet row to WalletSchema. */
export function walletBody(w: WalletRow, lang: Lang): WalletBody {
  const main = mainCardOf(w);
  const controls = walletControls({
    status: w.status,
    providerCustomerId: w.provider_customer_id,
    mainCard: main,
    cardsCount: w.cards.length,
  });
  const active = w.accounts.find((a) => a.id === w.active_account_id);
  return {
    id: w.id,
    status: w.status,
    ...controls,
    block_reason:
      main?.is_blocked && main.block_reason ? { key: main.block_reason, label: blockReasonLabel(main.block_reason, lang) } : null,
    balance: active?.balance ?? '0',
    active_account_id: w.active_account_id,
    main_card_id: w.main_card_id,
    accounts: w.accounts.map((a) => ({ id: a.id, title: a.title, description: a.description, balance: a.balance, is_active: a.is_active })),
    cards: orderCards(w.cards, w.main_card_id).map((c) => ({
      id: c.id,
      title: c.title,
      card_number: c.card_number,
      is_virtual: c.is_virtual,
      is_active: c.is_active,
      is_blocked: c.is_blocked,
      // Nothing to scan on a blocked or retired card.
      qrcode: c.is_active && !c.is_blocked ? c.qrcode : null,
    })),
    loyalty_status: w.loyalty_status,
    last_synced_at: w.last_synced_at?.toISOString() ?? null,
    last_error:
      w.status === 'error' && w.last_error_code
        ? {
            code: w.last_error_code,
            message: syncErrorMessage(w.last_error_code, lang),
            occurred_at: (w.last_error_at ?? w.updated_at).toISOString(),
            attempts: Math.max(1, w.last_error_attempts ?? 1),
          }
        : null,
    poll_after_seconds: w.status === 'pending' ? pollAfterSeconds(w.sync_attempts) : null,
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
  };
}

/** A card command's answer: what happened, its message, and the wallet after it. */
export function wrapperBody(outcome: Outcome, key: MessageKey | null, w: WalletRow, lang: Lang): WalletWrapperBody {
  return { outcome, message: key ? message(key, lang) : null, wallet: walletBody(w, lang) };
}

export const blockReasonsBody = (lang: Lang): Schemas['BlockReasonSchema'][] =>
  BLOCK_REASONS.map((r) => ({ key: r.key, label: r.label[lang] }));

/**
 * What linking the card `number` would do. `balance` is the card's balance when the caller may
 * see it, `transfer` what the physical card would take over from the wallet.
 */
export function linkPreviewBody(
  d: LinkDecision,
  number: string,
  card: ProviderCardLookup | null,
  balance: string | null,
  transfer: string | null,
  lang: Lang,
): Schemas['WalletLinkPreviewSchema'] {
  return {
    status: d.status,
    can_link: d.canLink,
    reason_code: d.reasonCode,
    card_number_masked: maskCardNumber(number),
    owner_match: d.ownerMatch,
    is_virtual: card?.is_virtual ?? null,
    card_balance: balance === null ? null : normalizeMoney(balance),
    transfer_amount: transfer,
    message: linkPreviewMessage(d.status, d.canLink, d.reasonCode, lang, transfer),
  };
}

// ---- the program ------------------------------------------------------------------------------

export function programBody(p: ProviderProgram): Schemas['LoyaltyProgramSchema'] {
  return {
    id: p.id,
    name: p.name,
    levels: [...p.levels]
      .sort((a, b) => a.order - b.order)
      .map((l) => ({
        id: l.id,
        order: l.order,
        name: l.name,
        boundary: normalizeMoney(l.boundary),
        clients_count: l.clients_count,
        range_label: l.range_label,
        description: l.description,
      })),
  };
}

/** A cart line of the discount preview: what was asked, and the shelf price found for it. */
export interface PreviewedLine {
  product_id: string;
  unit_id: string;
  quantityThousandths: bigint;
  unitPrice: string;
}

export function discountPreviewBody(
  storeId: string,
  lines: PreviewedLine[],
  member: LoyaltyMember | null,
  preview: CartPreview,
  lang: Lang,
  now: Date,
): Schemas['DiscountPreviewSchema'] {
  const points = preview.accrual.points;
  return {
    store_id: storeId,
    is_wallet_linked: member !== null,
    current_tier: member?.tierLabel ?? null,
    subtotal: money(preview.subtotal),
    discount_amount: money(preview.discount),
    total: money(preview.total),
    points_to_accrue: points.toString(),
    lines: lines.map((l, i) => ({
      product_id: l.product_id,
      unit_id: l.unit_id,
      quantity: formatDecimal(l.quantityThousandths, QUANTITY_SCALE),
      unit_price: normalizeMoney(l.unitPrice),
      subtotal: money(preview.lines[i]!.subtotal),
      discount_amount: money(preview.lines[i]!.discount),
      total: money(preview.lines[i]!.total),
      points_to_accrue: preview.lines[i]!.points.toString(),
    })),
    applied_discounts:
      preview.accrual.outcome === 'accrued' && preview.accrual.accrualPercent !== null
        ? [
            {
              code: 'BASE_ACCRUAL',
              name: baseAccrualName(member?.tierLabel ?? '', preview.accrual.accrualPercent, lang),
              amount: '0.00',
              points: points.toString(),
            },
          ]
        : [],
    calculated_at: now.toISOString(),
  };
}

// ---- purchases --------------------------------------------------------------------------------

export const purchaseBody = (p: PurchaseRow): Schemas['PurchaseSchema'] => ({
  id: p.id,
  date: p.occurred_at.toISOString(),
  shop_name: p.shop_name,
  total: normalizeMoney(p.total),
  bonus_accrual: normalizeMoney(p.bonus_accrual),
  items_count: p.items_count,
  source: p.source,
});

export const purchaseDetailBody = (
  p: PurchaseRow,
  positions: StoredPosition[],
  discounts: StoredDiscount[],
): Schemas['PurchaseDetailSchema'] => ({ ...purchaseBody(p), positions, discounts });

type OrderLine = Awaited<ReturnType<typeof orderLines>>[number];

const quantityOf = (text: string): bigint => parseDecimal(text, QUANTITY_SCALE) ?? 0n;

/**
 * A receipt position of an order line as ordered. Pieces are counted whole; a weighed line is one
 * position whose price and amount are for the weighed quantity. `price` is before the store's
 * promotion (old price), `discount` the difference, `amount` what the line cost.
 */
export function orderedPosition(l: OrderLine, lang: Lang): StoredPosition {
  const qty = quantityOf(l.quantity);
  const pieces = !l.weight_based && qty % 1000n === 0n;
  const amount = kopecks(l.line_total);
  const before = l.old_price === null ? amount : (kopecks(l.old_price) * qty + 500n) / 1000n;
  const discount = before > amount ? before - amount : 0n;
  const unitBefore = kopecks(l.old_price ?? l.unit_price);
  return {
    name: lang === 'ru' ? l.name_ru : l.name_en,
    code: l.barcode ?? l.plu_code ?? '',
    quantity: pieces ? Number(qty / 1000n) : 1,
    price: money(pieces ? unitBefore : amount + discount),
    amount: money(amount),
    discount: money(discount),
  };
}

/** A receipt position of a line as the picker collected it (changed lines carry no promotion). */
export function collectedPosition(p: ResultPosition): StoredPosition {
  const amount = kopecks(p.line_total);
  const qty = quantityOf(p.quantity);
  const pieces = p.weight === null && qty % 1000n === 0n;
  return {
    name: p.name,
    code: p.barcode ?? p.plu_code ?? '',
    quantity: pieces ? Number(qty / 1000n) : 1,
    price: money(pieces ? kopecks(p.unit_price) : amount),
    amount: money(amount),
    discount: money(0n),
  };
}

// ---- transactions -----------------------------------------------------------------------------

export function transactionBody(t: TransactionRow, source: 'provider' | 'local', lang: Lang): Schemas['TransactionSchema'] {
  const orderId = t.order_id && isUuid(t.order_id) ? t.order_id : null;
  return {
    id: t.id,
    type: t.type,
    status: t.status,
    amount: normalizeMoney(t.amount),
    balance_after: t.balance_after === null ? null : normalizeMoney(t.balance_after),
    account_id: t.account_id,
    created_at: t.created_at.toISOString(),
    available_at: t.available_at?.toISOString() ?? null,
    expires_at: t.expires_at?.toISOString() ?? null,
    description: transactionDescription(
      { type: t.type, order_no: orderId ? t.order_no : null, shop_name: t.shop_name, comment: t.comment },
      lang,
    ),
    purchase_id: t.purchase_id,
    order_id: orderId,
    source,
  };
}

/** A transaction as the provider reported it; `orderNo` is the number of its order here, if any. */
export function reportedTransactionBody(t: ReportedTransaction, orderNo: number | null, lang: Lang): Schemas['TransactionSchema'] {
  return transactionBody(
    {
      ...t,
      created_at: new Date(t.created_at),
      available_at: t.available_at ? new Date(t.available_at) : null,
      expires_at: t.expires_at ? new Date(t.expires_at) : null,
      order_no: orderNo,
    },
    'provider',
    lang,
  );
}
