// Row -> API mappers of the customer's approvals: a line's replacement preference and an approval
// as the customer sees it (ItemApprovalSchema); the picker's copy is mapped with its item.
import type { Selectable } from 'kysely';
import type { components } from '../../generated/api.test.js';
import type { ItemApprovalsTable, ReplacementPolicy } from '../../db/tables/approvals.js';
import { normalizeDecimal } from '../../domain/money/decimal.js';
import { normalizeMoney, QUANTITY_SCALE } from '../../domain/money/money.js';
import type { Lang } from '../../domain/texts/orders.js';

type Schemas = components['schemas'];
export type ItemApproval = Schemas['ItemApprovalSchema'];
export type ApprovalRow = Selectable<ItemApprovalsTable>;

/** A line's stored preference with its named products' names (in the reader's language), or null for the order's default. */
export function replacementPreferenceView(
  line: { replacement_policy: ReplacementPolicy | null; replacement_product_ids: string[]; replacement_approval: boolean },
  names: ReadonlyMap<string, { name_ru: string; name_en: string }>,
  lang: Lang,
): Schemas['ReplacementPreferenceSchema'] | null {
  if (!line.replacement_policy) return null;
  return {
    policy: line.replacement_policy,
    products: line.replacement_product_ids.flatMap((id) => {
      const n = names.get(id);
      // A named product since deleted from the catalog is no longer offered.
      return n ? [{ product_id: id, name: lang === 'ru' ? n.name_ru : n.name_en }] : [];
    }),
    approval_required: line.replacement_approval,
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** An approval as the customer sees it, in the reader's language. */
export function itemApprovalView(a: ApprovalRow, lang: Lang): ItemApproval {
  return {
    id: Number(a.id),
    item_id: Number(a.order_item_id),
    kind: a.kind,
    status: a.status,
    decided_by: a.decided_by,
    proposed: {
      product_id: a.proposed_product_id,
      name: lang === 'ru' ? a.proposed_name_ru : a.proposed_name_en,
      image: a.proposed_image,
      unit_price: normalizeMoney(a.proposed_unit_price),
      quantity: normalizeDecimal(a.proposed_quantity, QUANTITY_SCALE),
      line_total: normalizeMoney(a.proposed_line_total),
    },
    requested_at: a.requested_at.toISOString(),
    expires_at: a.expires_at.toISOString(),
    decided_at: iso(a.decided_at),
  };
}
