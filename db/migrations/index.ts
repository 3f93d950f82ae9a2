// The ordered list of frozen migrations. A static list (rather than a folder scan) works the
// same under tsx, vitest and a compiled build. Names sort in application order.
import type { Migration } from 'kysely/migration';
import * as foundation from './2026_11_22_0001_foundation.js';
import * as accounts from './2026_11_22_0002_accounts.js';
import * as catalog from './2026_11_22_0003_catalog.js';
import * as logistics from './2026_11_22_0004_logistics.js';
import * as orders from './2026_11_22_0005_orders.js';
import * as payments from './2026_11_22_0006_payments.js';
import * as picking from './2026_11_22_0007_picking.js';
import * as loyalty from './2026_11_22_0008_loyalty.js';
import * as searchSpeed from './2026_11_22_0009_search_speed.js';
import * as idempotencyAnswers from './2026_11_22_0010_idempotency_answers.js';
import * as searchPostings from './2026_11_22_0011_search_postings.js';
import * as bankInvoiceChecks from './2026_11_22_0012_bank_invoice_checks.js';
import * as bankLatePayments from './2026_11_22_0013_bank_late_payments.js';
import * as idempotencyAnswerGzip from './2026_11_22_0014_idempotency_answer_gzip.js';
import * as cancelRequestEndsPicking from './2026_11_23_0015_cancel_request_ends_picking.js';
import * as uncollectedPickups from './2026_11_23_0016_uncollected_pickups.js';
import * as loyaltyErase from './2026_11_23_0017_loyalty_erase.js';
import * as pickerLoginFolded from './2026_11_23_0018_picker_login_folded.js';
import * as courierStatusChecks from './2026_11_23_0019_courier_status_checks.js';
import * as pushOrderAndPickers from './2026_11_23_0020_push_order_and_pickers.js';
import * as queueHorizon from './2026_11_23_0021_queue_horizon.js';
import * as noHour24 from './2026_11_23_0022_no_hour_24.js';
import * as emailOrderUpdatesOff from './2026_11_26_2001_email_order_updates_off.js';
import * as promotionsConsentPerChannel from './2026_11_26_2002_promotions_consent_per_channel.js';
import * as outboxWakeAfterCommit from './2026_11_26_2101_outbox_wake_after_commit.js';
import * as pickingHotUpdates from './2026_11_26_2201_picking_hot_updates.js';
import * as courierDispatchScan from './2026_11_26_2301_courier_dispatch_scan.js';
import * as outboxMarkingHot from './2026_11_28_1301_outbox_marking_hot.js';
import * as outboxEmit from './2026_11_29_0901_outbox_emit.js';
import * as batchPicking from './2026_12_02_1801_batch_picking.js';
import * as customerDecides from './2026_12_03_0701_customer_decides.js';
import * as contentChanges from './2026_12_03_1101_content_changes.js';
import * as rateEventCounting from './2026_12_03_1401_rate_event_counting.js';
import * as catalogBulkImport from './2026_12_03_1501_catalog_bulk_import.js';

export const migrations: Record<string, Migration> = {
  '2026_11_22_0001_foundation': foundation,
  '2026_11_22_0002_accounts': accounts,
  '2026_11_22_0003_catalog': catalog,
  '2026_11_22_0004_logistics': logistics,
  '2026_11_22_0005_orders': orders,
  '2026_11_22_0006_payments': payments,
  '2026_11_22_0007_picking': picking,
  '2026_11_22_0008_loyalty': loyalty,
  '2026_11_22_0009_search_speed': searchSpeed,
  '2026_11_22_0010_idempotency_answers': idempotencyAnswers,
  '2026_11_22_0011_search_postings': searchPostings,
  '2026_11_22_0012_bank_invoice_checks': bankInvoiceChecks,
  '2026_11_22_0013_bank_late_payments': bankLatePayments,
  '2026_11_22_0014_idempotency_answer_gzip': idempotencyAnswerGzip,
  '2026_11_23_0015_cancel_request_ends_picking': cancelRequestEndsPicking,
  '2026_11_23_0016_uncollected_pickups': uncollectedPickups,
  '2026_11_23_0017_loyalty_erase': loyaltyErase,
  '2026_11_23_0018_picker_login_folded': pickerLoginFolded,
  '2026_11_23_0019_courier_status_checks': courierStatusChecks,
  '2026_11_23_0020_push_order_and_pickers': pushOrderAndPickers,
  '2026_11_23_0021_queue_horizon': queueHorizon,
  '2026_11_23_0022_no_hour_24': noHour24,
  '2026_11_26_2001_email_order_updates_off': emailOrderUpdatesOff,
  '2026_11_26_2002_promotions_consent_per_channel': promotionsConsentPerChannel,
  '2026_11_26_2101_outbox_wake_after_commit': outboxWakeAfterCommit,
  '2026_11_26_2201_picking_hot_updates': pickingHotUpdates,
  '2026_11_26_2301_courier_dispatch_scan': courierDispatchScan,
  '2026_11_28_1301_outbox_marking_hot': outboxMarkingHot,
  '2026_11_29_0901_outbox_emit': outboxEmit,
  '2026_12_02_1801_batch_picking': batchPicking,
  '2026_12_03_0701_customer_decides': customerDecides,
  '2026_12_03_1101_content_changes': contentChanges,
  '2026_12_03_1401_rate_event_counting': rateEventCounting,
  '2026_12_03_1501_catalog_bulk_import': catalogBulkImport,
};
