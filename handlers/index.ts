// Every TEST operation's handler. `HandlerMap` makes a missing operation a compile error.
import type { HandlerMap } from '../server/handler-types.js';
import { accountsHandlers } from './accounts.js';
import { authenticationHandlers } from './authentication.js';
import { catalogHandlers } from './catalog.js';
import { contentHandlers } from './content.js';
import { logisticsHandlers } from './logistics.js';
import { loyaltyHandlers } from './loyalty.js';
import { ordersHandlers } from './orders.js';
import { paymentsHandlers } from './payments.js';
import { pickerHandlers } from './picker.js';
import { qaHandlers } from './qa.js';

export const handlers: HandlerMap = {
  ...accountsHandlers,
  ...authenticationHandlers,
  ...catalogHandlers,
  ...contentHandlers,
  ...logisticsHandlers,
  ...loyaltyHandlers,
  ...ordersHandlers,
  ...paymentsHandlers,
  ...pickerHandlers,
  ...qaHandlers,
};
