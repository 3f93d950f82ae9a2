// Pickers and picking steps for tests: extra pickers in chosen stores (the demo has two), the
// demo customer's token (the owner of the factory's orders), and a started session.
import { randomBytes } from 'node:crypto';
import { DEMO_CUSTOMER } from '../../db/seed/accounts.js';
import type { PathsWithMethod } from 'openapi-typescript-helpers';
import type { components, paths } from '../../generated/api.test.js';
import { startSession } from '../../services/sessions.js';
import { hashSecret } from '../../domain/codes/passwords.js';
import { TokenService } from '../../platform/tokens.js';
import { command } from './orders.js';
import type { CheckedResponse } from './client.js';
import type { TestService } from './service.js';

export interface TestPicker {
  pickerId: number;
  login: string;
  displayName: string;
  access: string;
  auth: { authorization: string };
}

/** A new signed-in picker working in `storeIds` (the first is the default store). */
export async function createPicker(
  svc: TestService,
  storeIds: string[],
  displayName = `Picker ${randomBytes(2).toString('hex')}`,
): Promise<TestPicker> {
  const login = `picker-${randomBytes(4).toString('hex')}`;
  const { id } = await svc.deps.db
    .insertInto('pickers')
    .values({ login, display_name: displayName, password_hash: await hashSecret('test-password'), default_store_id: storeIds[0] ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (storeIds.length)
    await svc.deps.db
      .insertInto('picker_stores')
      .values(storeIds.map((store_id) => ({ picker_id: id, store_id })))
      .execute();
  const pair = await startSession(svc.deps.db, new TokenService(svc.config.jwt), { kind: 'picker', pickerId: id }, svc.deps.clock.now());
  return { pickerId: id, login, displayName, access: pair.access, auth: { authorization: `Bearer ${pair.access}` } };
}

/** The demo customer (who places the factory's orders), signed in. */
export async function signInDemoCustomer(svc: TestService) {
  const pair = await startSession(
    svc.deps.db,
    new TokenService(svc.config.jwt),
    { kind: 'customer', customerId: DEMO_CUSTOMER.id },
    svc.deps.clock.now(),
  );
  return { customerId: DEMO_CUSTOMER.id, auth: { authorization: `Bearer ${pair.access}` } };
}

/** Starts picking the order and returns the session (fails the test otherwise). */
export async function startPicking(
  svc: TestService,
  picker: { auth: { authorization: string } },
  orderId: string,
): Promise<components['schemas']['PickingSessionSchema']> {
  const r = await svc.client.call.POST('/api/picker/orders/{order_id}/start', {
    params: { path: { order_id: orderId } },
    headers: command(picker.auth),
  });
  if (r.status !== 200) throw new Error(`start answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

type ItemPath = Extract<PathsWithMethod<paths, 'post'>, `/api/picker/orders/{order_id}/items/{item_id}/${string}`>;
/** The item commands of the spec: `scan`, `weight`, `missing`, `clarification/resolve`, ... */
export type ItemAction = ItemPath extends `/api/picker/orders/{order_id}/items/{item_id}/${infer A}` ? A : never;
export type ItemBody<A extends ItemAction> = paths[`/api/picker/orders/{order_id}/items/{item_id}/${A}`]['post'] extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? B
  : undefined;

/** POST an item command, typed by the spec (a new key each time unless `headers` give one). */
export function itemCommand<A extends ItemAction>(
  svc: TestService,
  picker: { auth: { authorization: string } },
  orderId: string,
  itemId: number,
  action: A,
  body: ItemBody<A>,
  headers?: Record<string, string>,
): Promise<CheckedResponse>;
export function itemCommand(
  svc: TestService,
  picker: { auth: { authorization: string } },
  orderId: string,
  itemId: number,
  action: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<CheckedResponse> {
  const path = `/api/picker/orders/{order_id}/items/{item_id}/${action}` as `/api/picker/orders/{order_id}/items/{item_id}/scan`;
  return svc.client.call.POST(path, {
    params: { path: { order_id: orderId, item_id: itemId } },
    headers: command(picker.auth, headers),
    body: body as ItemBody<'scan'>,
  });
}

/** The session commands of an order: `start`, `finish`, `cancel`, `cancelled/ack`. */
export type SessionAction = 'start' | 'finish' | 'cancel' | 'cancelled/ack';
type SessionBody<A extends SessionAction> =
  NonNullable<paths[`/api/picker/orders/{order_id}/${A}`]['post']['requestBody']> extends infer RB
    ? [RB] extends [never]
      ? undefined
      : RB extends { content: { 'application/json': infer B } }
        ? B
        : undefined
    : undefined;

/** POST a session command, typed by the spec (a new key each time unless `headers` give one). */
export function sessionCommand<A extends SessionAction>(
  svc: TestService,
  picker: { auth: { authorization: string } },
  orderId: string,
  action: A,
  body?: SessionBody<A>,
  headers: Record<string, string> = {},
) {
  const path = `/api/picker/orders/{order_id}/${action}` as '/api/picker/orders/{order_id}/cancel';
  return svc.client.call.POST(path, { params: { path: { order_id: orderId } }, headers: command(picker.auth, headers), body });
}

/** An item command with a deliberately invalid body, action or item (see ContractClient.invalid). */
export function invalidItemCommand(
  svc: TestService,
  picker: { auth: { authorization: string } },
  orderId: string,
  itemId: number | string,
  action: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return svc.client.invalid('POST', `/api/picker/orders/${orderId}/items/${itemId}/${action}`, {
    headers: command(picker.auth, headers),
    body: body as object,
  });
}
