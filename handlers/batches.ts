// Handlers of batch picking (tag Picker), keyed by operationId: propose and take a batch, read
// it and its walk, bind a tote, place an item into a tote. Each reads its typed input and calls
// one use case of services/picking/batches.ts.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import {
  batchOfPicker,
  batchPickList,
  bindPickingTote,
  currentBatch,
  nextBatchStop,
  placePickingItemInTote,
  proposePickingBatch,
  takePickingBatch,
} from '../services/picking/batches.js';
import { pickerActionOf, pickerVersionedCommandOf } from './support/picker-headers.js';
import { pickerIdOf } from './support/principal.js';
import { requireStore } from './support/store.js';

export const batchHandlers = {
  // GET /api/picker/batches/proposal
  proposePickingBatch: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await proposePickingBatch(ctx.deps, pickerIdOf(ctx), store.id, ctx.query.max_orders) };
  },
  // POST /api/picker/batches
  takePickingBatch: async (ctx) => takePickingBatch(ctx.deps, pickerActionOf(ctx), ctx.body),
  // GET /api/picker/batches/current
  getCurrentPickingBatch: async (ctx) => ({ status: 200, body: await currentBatch(ctx.deps, pickerIdOf(ctx)) }),
  // GET /api/picker/batches/{batch_id}
  getPickingBatch: async (ctx) => ({ status: 200, body: await batchOfPicker(ctx.deps, pickerIdOf(ctx), Number(ctx.path.batch_id)) }),
  // GET /api/picker/batches/{batch_id}/pick-list
  getPickingBatchPickList: async (ctx) => ({
    status: 200,
    body: await batchPickList(ctx.deps, pickerIdOf(ctx), Number(ctx.path.batch_id), ctx.lang),
  }),
  // GET /api/picker/batches/{batch_id}/next
  getPickingBatchNextStop: async (ctx) => ({
    status: 200,
    body: await nextBatchStop(ctx.deps, pickerIdOf(ctx), Number(ctx.path.batch_id), ctx.lang),
  }),
  // POST /api/picker/batches/{batch_id}/totes/{tote_id}/bind
  bindPickingTote: async (ctx) => bindPickingTote(ctx.deps, pickerActionOf(ctx), ctx.path, ctx.body),
  // POST /api/picker/orders/{order_id}/items/{item_id}/tote
  placePickingItemInTote: async (ctx) =>
    placePickingItemInTote(ctx.deps, pickerVersionedCommandOf(ctx), { path: ctx.path, body: ctx.body }),
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const batchSteps: StepsMap = {
  proposePickingBatch: { varyBy: ['X-Store-Id', 'Accept-Language'] },
};
