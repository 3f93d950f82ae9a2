// Every TEST operation's handler. `HandlerMap` makes a missing operation a compile error.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { accountsHandlers } from './accounts.js';
import { approvalHandlers, approvalSteps } from './approvals.js';
import { authenticationHandlers, authenticationSteps } from './authentication.js';
import { batchHandlers, batchSteps } from './batches.js';
import { catalogHandlers, catalogSteps } from './catalog.js';
import { contentHandlers, contentSteps } from './content.js';
import { logisticsHandlers, logisticsSteps } from './logistics.js';
import { loyaltyHandlers, loyaltySteps } from './loyalty.js';
import { orderChangeHandlers, orderChangeSteps } from './order-changes.js';
import { ordersHandlers, ordersSteps } from './orders.js';
import { paymentsHandlers, paymentsSteps } from './payments.js';
import { pickerHandlers, pickerSteps } from './picker.js';
import { qaHandlers, qaSteps } from './qa.js';

export const handlers: HandlerMap = {
  ...accountsHandlers,
  ...approvalHandlers,
  ...authenticationHandlers,
  ...batchHandlers,
  ...catalogHandlers,
  ...contentHandlers,
  ...logisticsHandlers,
  ...loyaltyHandlers,
  ...orderChangeHandlers,
  ...ordersHandlers,
  ...paymentsHandlers,
  ...pickerHandlers,
  ...qaHandlers,
};

/** What the runtime does around each operation's handler, declared by its module. */
export const steps: StepsMap = {
  ...approvalSteps,
  ...authenticationSteps,
  ...batchSteps,
  ...catalogSteps,
  ...contentSteps,
  ...logisticsSteps,
  ...loyaltySteps,
  ...orderChangeSteps,
  ...ordersSteps,
  ...paymentsSteps,
  ...pickerSteps,
  ...qaSteps,
};
