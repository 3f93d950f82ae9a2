// The picker's own history: closed sessions in a period, one of them with its items, and the
// period's totals with the picking rates of its walks.
import type { Executor } from '../../db/executor.js';
import {
  findClosedSession,
  listClosedSessions,
  summariseClosedSessions,
  summariseWalks,
  type HistoryPeriod,
} from '../../db/queries/picking/history.js';
import { loadItems } from '../../db/queries/picking/items.js';
import { notFound } from '../errors.js';
import {
  toHistorySession,
  toHistorySessionDetail,
  toHistorySummary,
  type PickerHistorySessionDetailView,
  type PickerHistorySessionView,
  type PickerHistorySummaryView,
} from '../presenters/picking.js';
import { toPickingRates } from '../presenters/picking-rates.js';
import type { Lang } from './runner.js';

export interface HistoryPage {
  items: PickerHistorySessionView[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export async function listHistorySessions(
  db: Executor,
  pickerId: number,
  period: HistoryPeriod,
  page: { limit: number; offset: number },
  lang: Lang,
): Promise<HistoryPage> {
  const { limit, offset } = page;
  const { rows, total } = await listClosedSessions(db, pickerId, period, limit, offset);
  return { items: rows.map((r) => toHistorySession(r, lang)), total, limit, offset, has_more: offset + rows.length < total };
}

export async function historySession(
  db: Executor,
  pickerId: number,
  sessionId: number,
  lang: Lang,
): Promise<PickerHistorySessionDetailView> {
  const row = await findClosedSession(db, pickerId, sessionId);
  if (!row) throw notFound('No closed session of yours has this id');
  return toHistorySessionDetail(row, await loadItems(db, row.session_id), lang);
}

/** The period's totals; `asked` is the period as the query gave it, echoed in the answer. */
export async function historySummary(
  db: Executor,
  pickerId: number,
  period: HistoryPeriod,
  asked: { started_at: string | null; ended_at: string | null },
): Promise<PickerHistorySummaryView> {
  const [totals, walks] = await Promise.all([summariseClosedSessions(db, pickerId, period), summariseWalks(db, pickerId, period)]);
  return toHistorySummary(totals, asked, toPickingRates(walks));
}
