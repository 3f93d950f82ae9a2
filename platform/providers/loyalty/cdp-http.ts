// A real customer data platform over HTTP (JSON, bearer token). The endpoints, relative to
// LOYALTY_CDP_URL:
//
//   GET  /customers?phone=             {id}                          404: none
//   POST /customers/provision          {phone}          -> Customer  (Idempotency-Key)
//   GET  /customers/{id}                                -> Customer
//   GET  /programs                                      -> {programs: Program[]}
//   GET  /cards/{number}                                -> CardLookup  404: no such card
//   POST /cards/{number}/link          {customer_id, phone} -> Customer  (Idempotency-Key)
//   POST /cards/{number}/issue         {customer_id, phone} -> Customer  (Idempotency-Key)
//   POST /customers/{id}/cards/{card}/block    {reason}   -> Customer    (Idempotency-Key)
//   POST /customers/{id}/cards/{card}/unblock             -> Customer    (Idempotency-Key)
//   POST /customers/{id}/cards/{card}/replace             -> Customer    (Idempotency-Key)
//   GET  /customers/{id}/purchases                      -> {items: Purchase[]}
//   GET  /customers/{id}/purchases/{purchase}           -> PurchaseDetail  404: none
//   GET  /customers/{id}/operations?offset=&limit=      -> {items: Operation[], count}
//   POST /customers/{id}/accruals  {order_id, purchase_amount, points, occurred_at} -> {operation_id}
//   POST /customers/{id}/erase                           -> {}  404: already gone  (Idempotency-Key)
//
// A refusal is a 404/409/422 with `{"code": "<one of REJECTION_CODES>"}`. Every other failure -
// network error, timeout, 5xx, 429, another 4xx, a body that is not the documented shape - is a
// LoyaltyProviderError: `unavailable` for reads (and for commands that surely did nothing),
// `unknown` for a command whose answer did not come in time or could not be read (it may have
// been applied; it is re-sent with the same idempotency key).
import type { Logger } from '../../logger.js';
import {
  LoyaltyProviderError,
  REJECTION_CODES,
  type AccrualRequest,
  type LoyaltyProvider,
  type ProviderAccount,
  type ProviderCard,
  type ProviderCardLookup,
  type ProviderCustomer,
  type ProviderProgram,
  type ProviderPurchase,
  type ProviderPurchaseDetail,
  type ProviderTier,
  type ProviderTransaction,
} from './types.js';

export interface CdpHttpOptions {
  url: string;
  token: string | null;
  /** Deadline of reads (look-ups, lists). */
  readTimeoutMs: number;
  /** Deadline of commands; past it the outcome is unknown. */
  commandTimeoutMs: number;
}

/** The answer did not have the documented shape. */
class Malformed extends Error {}

// ---- answer readers: each checks the shape it needs and throws Malformed otherwise -------------

type Obj = Record<string, unknown>;
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

function obj(v: unknown, at: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Malformed(`${at}: not an object`);
  return v as Obj;
}
function str(o: Obj, k: string, at: string): string {
  const v = o[k];
  if (typeof v !== 'string') throw new Malformed(`${at}.${k}: not a string`);
  return v;
}
function optStr(o: Obj, k: string, at: string, fallback: string | null = null): string | null {
  const v = o[k];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string') throw new Malformed(`${at}.${k}: not a string`);
  return v;
}
function bool(o: Obj, k: string, at: string): boolean {
  const v = o[k];
  if (typeof v !== 'boolean') throw new Malformed(`${at}.${k}: not a boolean`);
  return v;
}
function int(o: Obj, k: string, at: string): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Malformed(`${at}.${k}: not an integer`);
  return v;
}
function optInt(o: Obj, k: string, at: string): number | null {
  return o[k] === undefined || o[k] === null ? null : int(o, k, at);
}
/** Amounts: a decimal string or a JSON number, returned as a decimal string. */
function dec(o: Obj, k: string, at: string): string {
  const v = o[k];
  const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
  if (typeof text !== 'string' || !DECIMAL.test(text)) throw new Malformed(`${at}.${k}: not a decimal`);
  return text;
}
function optDec(o: Obj, k: string, at: string): string | null {
  return o[k] === undefined || o[k] === null ? null : dec(o, k, at);
}
function date(o: Obj, k: string, at: string): string {
  const v = str(o, k, at);
  if (Number.isNaN(Date.parse(v))) throw new Malformed(`${at}.${k}: not a date-time`);
  return new Date(v).toISOString();
}
function optDate(o: Obj, k: string, at: string): string | null {
  return o[k] === undefined || o[k] === null ? null : date(o, k, at);
}
function arr(o: Obj, k: string, at: string): unknown[] {
  const v = o[k];
  if (!Array.isArray(v)) throw new Malformed(`${at}.${k}: not an array`);
  return v;
}
function oneOf<T extends string>(o: Obj, k: string, values: readonly T[], at: string): T {
  const v = str(o, k, at);
  if (!(values as readonly string[]).includes(v)) throw new Malformed(`${at}.${k}: unexpected value`);
  return v as T;
}

function readTier(v: unknown, at: string): ProviderTier | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, at);
  return {
    id: optInt(o, 'id', at),
    order: optInt(o, 'order', at),
    name: str(o, 'name', at),
    boundary: optDec(o, 'boundary', at),
    accrual_percent: optDec(o, 'accrual_percent', at),
  };
}

function readCard(v: unknown, at: string): ProviderCard {
  const o = obj(v, at);
  const qr = o.qrcode === null || o.qrcode === undefined ? null : obj(o.qrcode, `${at}.qrcode`);
  return {
    id: str(o, 'id', at),
    card_number: str(o, 'card_number', at),
    title: optStr(o, 'title', at, '') ?? '',
    is_virtual: bool(o, 'is_virtual', at),
    is_active: bool(o, 'is_active', at),
    is_blocked: bool(o, 'is_blocked', at),
    block_reason: optStr(o, 'block_reason', at),
    qrcode: qr ? { original: str(qr, 'original', at), listing: str(qr, 'listing', at), detail: str(qr, 'detail', at) } : null,
  };
}

function readAccount(v: unknown, at: string): ProviderAccount {
  const o = obj(v, at);
  return {
    id: str(o, 'id', at),
    title: optStr(o, 'title', at, '') ?? '',
    description: optStr(o, 'description', at, '') ?? '',
    balance: dec(o, 'balance', at),
    is_active: bool(o, 'is_active', at),
  };
}

function readCustomer(v: unknown): ProviderCustomer {
  const o = obj(v, 'customer');
  return {
    id: str(o, 'id', 'customer'),
    program_id: optInt(o, 'program_id', 'customer'),
    program_name: optStr(o, 'program_name', 'customer', '') ?? '',
    main_card_id: optStr(o, 'main_card_id', 'customer'),
    accounts: arr(o, 'accounts', 'customer').map((a, i) => readAccount(a, `customer.accounts[${i}]`)),
    cards: arr(o, 'cards', 'customer').map((c, i) => readCard(c, `customer.cards[${i}]`)),
    current_tier: readTier(o.current_tier, 'customer.current_tier'),
    next_tier: readTier(o.next_tier, 'customer.next_tier'),
    total_turnover: o.total_turnover === undefined ? '0' : dec(o, 'total_turnover', 'customer'),
    last_purchase_points: o.last_purchase_points === undefined ? '0' : dec(o, 'last_purchase_points', 'customer'),
  };
}

function readPrograms(v: unknown): ProviderProgram[] {
  return arr(obj(v, 'answer'), 'programs', 'answer').map((p, i) => {
    const at = `programs[${i}]`;
    const o = obj(p, at);
    return {
      id: int(o, 'id', at),
      name: str(o, 'name', at),
      levels: arr(o, 'levels', at).map((l, j) => {
        const lat = `${at}.levels[${j}]`;
        const lo = obj(l, lat);
        return {
          id: optInt(lo, 'id', lat),
          order: int(lo, 'order', lat),
          name: str(lo, 'name', lat),
          boundary: lo.boundary === undefined ? '0' : dec(lo, 'boundary', lat),
          clients_count: optInt(lo, 'clients_count', lat),
          range_label: optStr(lo, 'range_label', lat, '') ?? '',
          description: optStr(lo, 'description', lat, '') ?? '',
          accrual_percent: optDec(lo, 'accrual_percent', lat),
        };
      }),
    };
  });
}

function readCardLookup(v: unknown): ProviderCardLookup {
  const o = obj(v, 'card');
  return {
    id: str(o, 'id', 'card'),
    card_number: str(o, 'card_number', 'card'),
    is_virtual: bool(o, 'is_virtual', 'card'),
    issued: bool(o, 'issued', 'card'),
    holder_id: optStr(o, 'holder_id', 'card'),
    is_blocked: bool(o, 'is_blocked', 'card'),
    balance: o.balance === undefined || o.balance === null ? '0' : dec(o, 'balance', 'card'),
  };
}

function readPurchase(v: unknown, at: string): ProviderPurchase {
  const o = obj(v, at);
  return {
    id: str(o, 'id', at),
    date: date(o, 'date', at),
    shop_name: optStr(o, 'shop_name', at, '') ?? '',
    total: dec(o, 'total', at),
    bonus_accrual: o.bonus_accrual === undefined ? '0' : dec(o, 'bonus_accrual', at),
    items_count: o.items_count === undefined ? 0 : int(o, 'items_count', at),
  };
}

function readPurchaseDetail(v: unknown): ProviderPurchaseDetail {
  const o = obj(v, 'purchase');
  const positions = arr(o, 'positions', 'purchase').map((p, i) => {
    const at = `purchase.positions[${i}]`;
    const po = obj(p, at);
    return {
      name: optStr(po, 'name', at, '') ?? '',
      code: optStr(po, 'code', at, '') ?? '',
      quantity: po.quantity === undefined ? 1 : int(po, 'quantity', at),
      price: po.price === undefined ? '0' : dec(po, 'price', at),
      amount: po.amount === undefined ? '0' : dec(po, 'amount', at),
      discount: po.discount === undefined ? '0' : dec(po, 'discount', at),
    };
  });
  const discounts = (o.discounts === undefined ? [] : arr(o, 'discounts', 'purchase')).map((d, i) => {
    const at = `purchase.discounts[${i}]`;
    const dob = obj(d, at);
    return { name: optStr(dob, 'name', at, '') ?? '', amount: dob.amount === undefined ? '0' : dec(dob, 'amount', at) };
  });
  return {
    ...readPurchase(o, 'purchase'),
    items_count: o.items_count === undefined ? positions.length : int(o, 'items_count', 'purchase'),
    positions,
    discounts,
  };
}

const TX_TYPES = ['accrual', 'redemption', 'expiry', 'adjustment'] as const;
const TX_STATUSES = ['pending', 'posted', 'cancelled'] as const;

function readOperations(v: unknown): { items: ProviderTransaction[]; count: number } {
  const o = obj(v, 'answer');
  const items = arr(o, 'items', 'answer').map((t, i) => {
    const at = `items[${i}]`;
    const to = obj(t, at);
    return {
      id: str(to, 'id', at),
      type: oneOf(to, 'type', TX_TYPES, at),
      status: oneOf(to, 'status', TX_STATUSES, at),
      amount: dec(to, 'amount', at),
      balance_after: optDec(to, 'balance_after', at),
      account_id: optStr(to, 'account_id', at),
      created_at: date(to, 'created_at', at),
      available_at: optDate(to, 'available_at', at),
      expires_at: optDate(to, 'expires_at', at),
      order_id: optStr(to, 'order_id', at),
      purchase_id: optStr(to, 'purchase_id', at),
      shop_name: optStr(to, 'shop_name', at),
      comment: optStr(to, 'comment', at),
    };
  });
  return { items, count: int(o, 'count', 'answer') };
}

// ---- the adapter ------------------------------------------------------------------------------

type Mode = 'read' | 'command';
const NOT_FOUND = Symbol('not found');

export class CdpHttpLoyaltyProvider implements LoyaltyProvider {
  readonly name = 'cdp' as const;

  constructor(
    private readonly opts: CdpHttpOptions,
    private readonly log: Logger,
  ) {}

  async findCustomerId(phone: string): Promise<string | null> {
    const body = await this.call('read', 'GET', `/customers?phone=${encodeURIComponent(phone)}`, { notFoundIsNull: true });
    return body === NOT_FOUND ? null : this.parse(() => str(obj(body, 'answer'), 'id', 'answer'), 'read');
  }

  async provisionCustomer({ phone, idempotencyKey }: { phone: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    const body = await this.call('command', 'POST', '/customers/provision', { body: { phone }, idempotencyKey });
    return this.parse(() => readCustomer(body), 'command');
  }

  async getCustomer(customerId: string): Promise<ProviderCustomer> {
    const body = await this.call('read', 'GET', `/customers/${encodeURIComponent(customerId)}`);
    return this.parse(() => readCustomer(body), 'read');
  }

  async listPrograms(): Promise<ProviderProgram[]> {
    const body = await this.call('read', 'GET', '/programs');
    return this.parse(() => readPrograms(body), 'read');
  }

  async lookupCard(cardNumber: string): Promise<ProviderCardLookup | null> {
    const body = await this.call('read', 'GET', `/cards/${encodeURIComponent(cardNumber)}`, { notFoundIsNull: true });
    return body === NOT_FOUND ? null : this.parse(() => readCardLookup(body), 'read');
  }

  async linkCard(i: { customerId: string | null; phone: string; cardNumber: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    const body = await this.call('command', 'POST', `/cards/${encodeURIComponent(i.cardNumber)}/link`, {
      body: { customer_id: i.customerId, phone: i.phone },
      idempotencyKey: i.idempotencyKey,
    });
    return this.parse(() => readCustomer(body), 'command');
  }

  async issuePhysicalCard(i: {
    customerId: string | null;
    phone: string;
    cardNumber: string;
    idempotencyKey: string;
  }): Promise<ProviderCustomer> {
    const body = await this.call('command', 'POST', `/cards/${encodeURIComponent(i.cardNumber)}/issue`, {
      body: { customer_id: i.customerId, phone: i.phone },
      idempotencyKey: i.idempotencyKey,
    });
    return this.parse(() => readCustomer(body), 'command');
  }

  async blockCard(i: { customerId: string; cardId: string; reason: string | null; idempotencyKey: string }): Promise<ProviderCustomer> {
    const body = await this.call('command', 'POST', `${this.cardPath(i.customerId, i.cardId)}/block`, {
      body: { reason: i.reason },
      idempotencyKey: i.idempotencyKey,
    });
    return this.parse(() => readCustomer(body), 'command');
  }

  async unblockCard(i: { customerId: string; cardId: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    const body = await this.call('command', 'POST', `${this.cardPath(i.customerId, i.cardId)}/unblock`, {
      body: {},
      idempotencyKey: i.idempotencyKey,
    });
    return this.parse(() => readCustomer(body), 'command');
  }

  async replaceCard(i: { customerId: string; cardId: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    const body = await this.call('command', 'POST', `${this.cardPath(i.customerId, i.cardId)}/replace`, {
      body: {},
      idempotencyKey: i.idempotencyKey,
    });
    return this.parse(() => readCustomer(body), 'command');
  }

  async listPurchases(customerId: string): Promise<ProviderPurchase[]> {
    const body = await this.call('read', 'GET', `/customers/${encodeURIComponent(customerId)}/purchases`);
    return this.parse(() => arr(obj(body, 'answer'), 'items', 'answer').map((p, i) => readPurchase(p, `items[${i}]`)), 'read');
  }

  async getPurchase(customerId: string, purchaseId: string): Promise<ProviderPurchaseDetail | null> {
    const body = await this.call(
      'read',
      'GET',
      `/customers/${encodeURIComponent(customerId)}/purchases/${encodeURIComponent(purchaseId)}`,
      { notFoundIsNull: true },
    );
    return body === NOT_FOUND ? null : this.parse(() => readPurchaseDetail(body), 'read');
  }

  async listTransactions(
    customerId: string,
    page: { offset: number; limit: number },
  ): Promise<{ items: ProviderTransaction[]; count: number }> {
    const body = await this.call(
      'read',
      'GET',
      `/customers/${encodeURIComponent(customerId)}/operations?offset=${page.offset}&limit=${page.limit}`,
    );
    return this.parse(() => readOperations(body), 'read');
  }

  async eraseCustomer(i: { customerId: string; idempotencyKey: string }): Promise<void> {
    // 404: the provider no longer knows the customer - nothing left to erase.
    await this.call('command', 'POST', `/customers/${encodeURIComponent(i.customerId)}/erase`, {
      body: {},
      idempotencyKey: i.idempotencyKey,
      notFoundIsNull: true,
    });
  }

  async recordAccrual(i: AccrualRequest): Promise<{ operation_id: string }> {
    const body = await this.call('command', 'POST', `/customers/${encodeURIComponent(i.customerId)}/accruals`, {
      body: { order_id: i.orderId, purchase_amount: i.purchaseAmount, points: i.points, occurred_at: i.occurredAt },
      idempotencyKey: i.idempotencyKey,
    });
    return this.parse(() => ({ operation_id: str(obj(body, 'answer'), 'operation_id', 'answer') }), 'command');
  }

  async close(): Promise<void> {
    // fetch keeps no connections of ours open.
  }

  // ---- internals ------------------------------------------------------------------------------

  private cardPath(customerId: string, cardId: string) {
    return `/customers/${encodeURIComponent(customerId)}/cards/${encodeURIComponent(cardId)}`;
  }

  private parse<T>(read: () => T, mode: Mode): T {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof Malformed)) throw err;
      this.log.warn('loyalty provider answered an unexpected body', { provider: 'cdp', problem: err.message });
      // A command was received and answered: whether it was applied is unknown.
      throw new LoyaltyProviderError(mode === 'command' ? 'unknown' : 'unavailable', `unexpected answer: ${err.message}`);
    }
  }

  private async call(
    mode: Mode,
    method: 'GET' | 'POST',
    path: string,
    options: { body?: unknown; idempotencyKey?: string; notFoundIsNull?: boolean } = {},
  ): Promise<unknown> {
    const started = performance.now();
    const timeoutMs = mode === 'command' ? this.opts.commandTimeoutMs : this.opts.readTimeoutMs;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    let status: number;
    let text: string;
    try {
      // One deadline for the whole exchange, body included.
      const signal = AbortSignal.timeout(timeoutMs);
      const response = await fetch(this.opts.url + path, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal,
      });
      status = response.status;
      text = await response.text();
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
      const duration_ms = Math.round(performance.now() - started);
      this.log.warn('loyalty provider failed', { provider: 'cdp', method, reason: timedOut ? 'timeout' : 'unreachable', duration_ms });
      // A command that timed out may have been applied; one that could not connect was not.
      throw new LoyaltyProviderError(
        timedOut && mode === 'command' ? 'unknown' : 'unavailable',
        timedOut ? 'provider timeout' : 'provider unreachable',
      );
    }
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    if (status >= 200 && status < 300) {
      if (body === undefined)
        return this.parse(() => {
          throw new Malformed('body is not JSON');
        }, mode);
      return body;
    }
    if (status === 404 && options.notFoundIsNull) return NOT_FOUND;
    const code = typeof body === 'object' && body !== null ? (body as Obj).code : undefined;
    if (
      (status === 404 || status === 409 || status === 422) &&
      typeof code === 'string' &&
      (REJECTION_CODES as readonly string[]).includes(code)
    ) {
      throw new LoyaltyProviderError('rejected', `provider refused: ${code}`, code);
    }
    this.log.warn('loyalty provider answered with an error', { provider: 'cdp', method, status });
    throw new LoyaltyProviderError('unavailable', `provider answered ${status}`);
  }
}
