// All configuration comes from the environment, read once here. Every value has a default that
// makes `npm start` work with zero configuration in TEST; PROD refuses to start without secrets.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ConnectionLimits } from '../db/connection.js';
import { compareVersions, isVersion } from '../domain/accounts/mobile-version.js';

export type AppEnv = 'TEST' | 'PROD';

export interface Config {
  env: AppEnv;
  host: string;
  port: number;
  /** External PostgreSQL; unset means the embedded server in `dataDir`. */
  databaseUrl: string | null;
  /** Direct connection for LISTEN and migrations when DATABASE_URL is a transaction-mode pooler. */
  databaseDirectUrl: string | null;
  /** Named prepared statements on pooled connections (off behind poolers that cannot keep them). */
  dbNamedStatements: boolean;
  /**
   * A streaming replica of the primary for reads that may be a moment stale (db/read-replica.ts);
   * null: those reads go to DATABASE_URL like every other.
   */
  databaseReadUrl: string | null;
  /** When the replica is out of use: further behind than `maxLagSeconds`, and how long before it is asked again. */
  readReplica: { maxLagSeconds: number; retrySeconds: number };
  dataDir: string;
  dbPoolMax: number;
  /**
   * Time limits of every connection of the service's pool, and its wait for a free connection
   * (db/connection.ts ConnectionLimits). A request that meets one answers 503 DATABASE_UNAVAILABLE.
   */
  dbLimits: ConnectionLimits;
  /**
   * The background jobs' own pool: its size and its time limits, longer than a request's (a job's
   * batch may rightly wait for a lock or run a long statement; nobody is waiting on a phone).
   */
  dbJobsPoolMax: number;
  dbJobLimits: ConnectionLimits;
  buildCommit: string;
  jwt: {
    secret: string;
    issuer: string;
    accessTtlSeconds: number;
    refreshTtlSeconds: number;
    /**
     * How long after a rotation the token just exchanged still answers (with the family's current
     * token, rotating nothing): a retry after a lost answer, or two refreshes sent at once.
     */
    refreshReuseGraceSeconds: number;
    recoveryTtlSeconds: number;
  };
  auth: {
    /** HMAC key for one-time codes at rest (derived from JWT_SECRET unless OTP_HMAC_KEY is set). */
    otpHmacKey: string;
    otpTtlSeconds: number;
    otpMaxAttempts: number;
    otpResendCooldownSeconds: number;
    otpMaxSendsPerHour: number;
    /** Phones whose codes are not sent by SMS but readable through GET /api/qa/otp/last (TEST only). */
    otpTestPhonePrefixes: string[];
    /** Wrong PINs per phone (and passwords per picker login) before a lockout. */
    pinMaxFailures: number;
    pickerMaxFailures: number;
    lockoutSeconds: number;
    /** Requests per client IP per minute on sign-in operations. */
    ipRequestsPerMinute: number;
  };
  sms: {
    provider: 'log' | 'http';
    httpUrl: string | null;
    httpToken: string | null;
    timeoutMs: number;
    sender: string;
  };
  /** Trust X-Forwarded-For from this many proxies in front of the service (express `trust proxy`). */
  trustProxyHops: number;
  bodyLimitBytes: number;
  /** Longest a client may take to send a whole request, headers and body (408 past it). */
  requestTimeoutMs: number;
  /** Event-loop delay above which /readyz answers 503 (0: never for that reason). */
  readinessMaxEventLoopDelayMs: number;
  shutdownGraceMs: number;
  /**
   * On SIGTERM, how long /readyz answers 503 while requests are still served, before the
   * listener closes (so a load balancer stops sending first). Ctrl-C and SIGHUP do not wait.
   */
  shutdownDelayMs: number;
  /**
   * Open sockets one account may hold on one instance, per WebSocket channel; a new one beyond
   * closes the account's oldest (SOCKET_REPLACED). 0: no limit.
   */
  wsMaxSocketsPerAccount: number;
  /** Unsent bytes a socket may hold before further events to it are dropped (0: no cap). */
  wsMaxBufferedBytes: number;
  /** Check every response against the spec and log violations (TEST default). */
  validateResponses: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** OpenTelemetry traces (platform/telemetry-otel.ts); off while `otlpEndpoint` is null. */
  tracing: { otlpEndpoint: string | null; serviceName: string };
  /** Seed demo data into an empty database on start (embedded default). */
  seedDemoData: boolean;
  /** Eagerly compile all request validators in the background after listening. */
  warmValidators: boolean;
  /**
   * How long a process reuses an active store's row (X-Store-Id is read on most requests). A
   * deactivated or edited store is seen by every process within this many seconds; 0 reads the
   * database every time.
   */
  storeCacheSeconds: number;
  logistics: LogisticsConfig;
  catalog: CatalogConfig;
  orders: OrdersConfig;
  metrics: MetricsConfig;
  picking: PickingConfig;
  loyalty: LoyaltyConfig;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

/** The checkout's short commit, or 'unknown' where there is no git (a built copy, a container). */
export function gitCommit(root: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

/** TEST without JWT_SECRET: a random secret kept in the data folder, so tokens survive restarts. */
function localSecret(dataDir: string): string {
  const file = path.join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

function smsProvider(raw: string | undefined): 'log' | 'http' {
  const value = (raw ?? 'log').toLowerCase();
  if (value !== 'log' && value !== 'http') throw new Error(`SMS_PROVIDER must be log or http, got "${raw}"`);
  return value;
}

/** Map screen, address search and geocoding, and the request budget of the public logistics operations. */
export interface LogisticsConfig {
  map: {
    /** Whether the app shows the map; needs `publicToken`. */
    enabled: boolean;
    publicToken: string | null;
    styleUri: string | null;
    searchMinLength: number;
    searchMaxResults: number;
    searchDebounceMs: number;
  };
  geocoder: {
    /** `gazetteer`: the streets and houses kept in PostgreSQL (works offline); `mapbox`: Mapbox Geocoding v6. */
    provider: 'gazetteer' | 'mapbox';
    url: string;
    accessToken: string | null;
    /** A provider answer slower than this is a failure (502 GEOCODER_UNAVAILABLE). */
    timeoutMs: number;
    reverseRadiusMeters: number;
  };
  /** Requests per client IP per minute on each instance for the Logistics operations; 0 = unlimited. */
  requestsPerMinute: number;
}

function logisticsConfig(env: NodeJS.ProcessEnv): LogisticsConfig {
  const intIn = (name: string, fallback: number, min: number, max: number) => {
    const n = int(env, name, fallback, min);
    if (n > max) throw new Error(`${name} must be at most ${max}, got "${env[name]}"`);
    return n;
  };
  const publicToken = env.MAP_PUBLIC_TOKEN || null;
  const enabled = bool(env, 'MAP_ENABLED', publicToken !== null);
  if (enabled && !publicToken) throw new Error('MAP_ENABLED=true needs MAP_PUBLIC_TOKEN (the map SDK cannot load without it)');
  const provider = (env.GEOCODER_PROVIDER ?? 'gazetteer').toLowerCase();
  if (provider !== 'gazetteer' && provider !== 'mapbox')
    throw new Error(`GEOCODER_PROVIDER must be gazetteer or mapbox, got "${env.GEOCODER_PROVIDER}"`);
  const accessToken = env.GEOCODER_ACCESS_TOKEN || null;
  if (provider === 'mapbox' && !accessToken) throw new Error('GEOCODER_PROVIDER=mapbox needs GEOCODER_ACCESS_TOKEN');
  return {
    map: {
      enabled,
      publicToken: enabled ? publicToken : null,
      styleUri: enabled ? env.MAP_STYLE_URI || null : null,
      searchMinLength: intIn('MAP_SEARCH_MIN_LENGTH', 2, 2, 10),
      searchMaxResults: intIn('MAP_SEARCH_MAX_RESULTS', 7, 1, 20),
      searchDebounceMs: intIn('MAP_SEARCH_DEBOUNCE_MS', 400, 0, 5000),
    },
    geocoder: {
      provider,
      url: (env.GEOCODER_URL || 'https://api.mapbox.com').replace(/\/+$/, ''),
      accessToken,
      timeoutMs: intIn('GEOCODER_TIMEOUT_MS', 2000, 100, 30_000),
      reverseRadiusMeters: intIn('REVERSE_GEOCODE_RADIUS_METERS', 100, 1, 5000),
    },
    requestsPerMinute: int(env, 'LOGISTICS_REQUESTS_PER_MINUTE', 600, 0),
  };
}

/** The versioned catalog snapshot and the mobile app version check. */
export interface CatalogConfig {
  /** Hours a replaced catalog version stays loadable through GET /api/catalog/bootstrap/{version}. */
  previousVersionTtlHours: number;
  /** Lowest supported and latest app versions per platform; null: not configured (no prompt). */
  mobileVersions: Record<'android' | 'ios', { minimum: string; latest: string } | null>;
  /**
   * How long an instance reuses how a search text resolved against the search vocabulary (its
   * candidate words). Words added by a catalog import are matched within this time; 0: never reused.
   */
  searchPlanCacheSeconds: number;
  /**
   * How long an instance keeps a product listing page or product card it read (anonymous;
   * favourites are laid over it per request), so stock and prices on it may be this old; 0:
   * every one is read (services/products-cache.ts).
   */
  productsCacheSeconds: number;
}

function catalogConfig(env: NodeJS.ProcessEnv): CatalogConfig {
  const platform = (name: 'ANDROID' | 'IOS', minimum: string, latest: string) => {
    const min = env[`MOBILE_${name}_MIN_VERSION`] ?? minimum;
    const max = env[`MOBILE_${name}_LATEST_VERSION`] ?? latest;
    if (min === '' && max === '') return null; // both set empty: the platform is not configured
    for (const [key, v] of [
      [`MOBILE_${name}_MIN_VERSION`, min],
      [`MOBILE_${name}_LATEST_VERSION`, max],
    ]) {
      if (!isVersion(v!)) throw new Error(`${key} must be a version like 2.14.0, got "${v}"`);
    }
    if (compareVersions(min, max) > 0)
      throw new Error(`MOBILE_${name}_MIN_VERSION (${min}) is above MOBILE_${name}_LATEST_VERSION (${max})`);
    return { minimum: min, latest: max };
  };
  return {
    previousVersionTtlHours: int(env, 'CATALOG_PREVIOUS_VERSION_TTL_HOURS', 24, 0),
    mobileVersions: { android: platform('ANDROID', '1.0.0', '1.4.0'), ios: platform('IOS', '1.0.0', '1.4.0') },
    searchPlanCacheSeconds: int(env, 'CATALOG_SEARCH_CACHE_SECONDS', 60, 0),
    productsCacheSeconds: int(env, 'CATALOG_PRODUCTS_CACHE_SECONDS', 2, 0),
  };
}

/** GET /metrics. */
export interface MetricsConfig {
  /** Serve GET /metrics at all. */
  enabled: boolean;
  /** When set, /metrics answers only `Authorization: Bearer <token>` (for a port reachable from outside). */
  bearerToken: string | null;
}

function metricsConfig(env: NodeJS.ProcessEnv): MetricsConfig {
  const bearerToken = env.METRICS_TOKEN || null;
  if (bearerToken !== null && bearerToken.length < 16) throw new Error('METRICS_TOKEN must be at least 16 characters');
  return { enabled: bool(env, 'METRICS_ENABLED', true), bearerToken };
}

/** Checkout, online payment, push notifications and courier delivery. */
export interface OrdersConfig {
  /** Whether POST /api/orders/ refuses a request without Idempotency-Key (422 IDEMPOTENCY_KEY_REQUIRED). */
  idempotencyKeyRequired: boolean;
  /** Seconds between two re-reads of the roadmap detail while the courier marker is live. */
  trackingRefreshSeconds: number;
  /** Scheduled deliveries: a courier is requested this many minutes before the slot starts. */
  courierDispatchLeadMinutes: number;
  /** Background worker (push, provider commands, payment deadlines, courier dispatch). */
  worker: { enabled: boolean; intervalMs: number; batchSize: number };
  bank: {
    /** Online payment offered (BankPreferencesSchema `enabled`). */
    enabled: boolean;
    /** `sandbox`: the local bank driven by the QA operation; `http`: a real acquiring API. */
    provider: 'sandbox' | 'http';
    currency: string;
    paymentWindowMinutes: number;
    invoiceLifetimeMinutes: number;
    returnUrl: string | null;
    /** Where the sandbox bank's payment page lives (`{base}/{invoice_id}`). */
    sandboxPageUrl: string;
    httpUrl: string | null;
    httpToken: string | null;
    timeoutMs: number;
    /** How often the orders worker asks a real bank about each open invoice (seconds). */
    statusCheckSeconds: number;
  };
  push: {
    /** `recording`: keeps and logs what would be sent; `http`: a JSON push gateway. */
    provider: 'recording' | 'http';
    httpUrl: string | null;
    httpToken: string | null;
    timeoutMs: number;
    /** Attempts per device before a notification is given up. */
    maxAttempts: number;
    /** First retry delay; doubles with every attempt (capped at one hour). */
    retryBaseSeconds: number;
  };
  courier: {
    /** `simulator`: driven by POST /api/qa/orders/{order_id}/delivery-tracking; `http`: a courier service API. */
    provider: 'simulator' | 'http';
    httpUrl: string | null;
    httpToken: string | null;
    timeoutMs: number;
    /** How often the orders worker asks an `http` courier service where each delivery it follows is. */
    statusCheckSeconds: number;
  };
}

function ordersConfig(env: NodeJS.ProcessEnv): OrdersConfig {
  const choice = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const value = (env[name] || fallback).toLowerCase() as T;
    if (!allowed.includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${env[name]}"`);
    return value;
  };
  const bankProvider = choice('BANK_PROVIDER', 'sandbox', ['sandbox', 'http'] as const);
  const pushProvider = choice('PUSH_PROVIDER', 'recording', ['recording', 'http'] as const);
  const courierProvider = choice('COURIER_PROVIDER', 'simulator', ['simulator', 'http'] as const);
  if (bankProvider === 'http' && !env.BANK_HTTP_URL) throw new Error('BANK_PROVIDER=http needs BANK_HTTP_URL');
  if (pushProvider === 'http' && !env.PUSH_HTTP_URL) throw new Error('PUSH_PROVIDER=http needs PUSH_HTTP_URL');
  if (courierProvider === 'http' && !env.COURIER_HTTP_URL) throw new Error('COURIER_PROVIDER=http needs COURIER_HTTP_URL');
  const paymentWindowMinutes = int(env, 'ORDER_PAYMENT_WINDOW_MINUTES', 30, 1);
  const refresh = int(env, 'TRACKING_REFRESH_SECONDS', 15, 5);
  if (refresh > 300) throw new Error('TRACKING_REFRESH_SECONDS must be at most 300');
  return {
    idempotencyKeyRequired: bool(env, 'ORDER_IDEMPOTENCY_KEY_REQUIRED', true),
    trackingRefreshSeconds: refresh,
    courierDispatchLeadMinutes: int(env, 'COURIER_DISPATCH_LEAD_MINUTES', 45, 0),
    worker: {
      enabled: bool(env, 'ORDER_WORKER_ENABLED', true),
      intervalMs: int(env, 'ORDER_WORKER_INTERVAL_MS', 500, 10),
      batchSize: int(env, 'ORDER_WORKER_BATCH_SIZE', 50, 1),
    },
    bank: {
      enabled: bool(env, 'ONLINE_PAYMENT_ENABLED', true),
      provider: bankProvider,
      currency: env.BANK_CURRENCY || 'RUB',
      paymentWindowMinutes,
      // An invoice never outlives the payment window.
      invoiceLifetimeMinutes: Math.min(int(env, 'BANK_INVOICE_LIFETIME_MINUTES', 15, 1), paymentWindowMinutes),
      returnUrl: env.BANK_RETURN_URL === undefined ? 'groceryapp://payments/return' : env.BANK_RETURN_URL || null,
      sandboxPageUrl: (env.BANK_SANDBOX_PAGE_URL || 'https://sandbox.pay.bank.example/invoice').replace(/\/+$/, ''),
      httpUrl: env.BANK_HTTP_URL ? env.BANK_HTTP_URL.replace(/\/+$/, '') : null,
      httpToken: env.BANK_HTTP_TOKEN || null,
      timeoutMs: int(env, 'BANK_TIMEOUT_MS', 5000, 100),
      statusCheckSeconds: int(env, 'BANK_STATUS_CHECK_SECONDS', 10, 1),
    },
    push: {
      provider: pushProvider,
      httpUrl: env.PUSH_HTTP_URL || null,
      httpToken: env.PUSH_HTTP_TOKEN || null,
      timeoutMs: int(env, 'PUSH_TIMEOUT_MS', 5000, 100),
      maxAttempts: int(env, 'PUSH_MAX_ATTEMPTS', 8, 1),
      retryBaseSeconds: int(env, 'PUSH_RETRY_BASE_SECONDS', 5, 0),
    },
    courier: {
      provider: courierProvider,
      httpUrl: env.COURIER_HTTP_URL ? env.COURIER_HTTP_URL.replace(/\/+$/, '') : null,
      httpToken: env.COURIER_HTTP_TOKEN || null,
      timeoutMs: int(env, 'COURIER_TIMEOUT_MS', 3000, 100),
      statusCheckSeconds: int(env, 'COURIER_STATUS_CHECK_SECONDS', 15, 0),
    },
  };
}

/** Picking sessions, the picker queue and the picker channel. */
export interface PickingConfig {
  /** Allowed deviation of a weight item from its ordered weight, percent with at most one decimal ("10.0"). */
  weightTolerancePercent: string;
  /** Items a picker may add to one session (PickingSessionSchema.max_added_items). */
  maxAddedItems: number;
  /** An open session without an applied change for this long is closed as `expired`; 0: never. */
  sessionIdleMinutes: number;
  /**
   * How often the picking sweep runs: expiry of idle sessions and the `order_added` news of slot
   * orders entering the queue. 0 turns the whole sweep off (tests drive it themselves).
   */
  expirySweepSeconds: number;
  /** How often proposals the customer left unanswered past their store's window are settled (they stand); 0: never (tests drive it). */
  approvalSweepSeconds: number;
  /** Slot orders are due this many minutes before their slot starts (queue `pick_deadline`). */
  slotPickLeadMinutes: number;
  /** Express orders are due this many minutes after they were placed. */
  expressPickMinutes: number;
  /** Slot orders enter the queue when their slot starts within this many hours. */
  queueHorizonHours: number;
  /** Seconds between the server's pings on /ws/picker/ (PickerRealtimeMetadataSchema.heartbeat_interval_seconds). */
  realtimeHeartbeatSeconds: number;
  /** Batch picking: the most orders and lines one walk takes, and how much later than the most urgent order another may be due to join it. */
  batch: { maxOrders: number; maxLines: number; dueWindowMinutes: number };
}

function pickingConfig(env: NodeJS.ProcessEnv): PickingConfig {
  const tolerance = env.PICKING_WEIGHT_TOLERANCE_PERCENT ?? '10.0';
  const t = /^([0-9]{1,2})(\.[0-9])?$/.exec(tolerance);
  if (!t || Number(tolerance) >= 50)
    throw new Error(`PICKING_WEIGHT_TOLERANCE_PERCENT must be a percent below 50 with at most one decimal, got "${tolerance}"`);
  return {
    weightTolerancePercent: `${t[1]}${t[2] ?? '.0'}`,
    maxAddedItems: int(env, 'PICKING_MAX_ADDED_ITEMS', 10, 0),
    sessionIdleMinutes: int(env, 'PICKING_SESSION_IDLE_MINUTES', 240, 0),
    expirySweepSeconds: int(env, 'PICKING_EXPIRY_SWEEP_SECONDS', 60, 0),
    approvalSweepSeconds: int(env, 'PICKING_APPROVAL_SWEEP_SECONDS', 5, 0),
    slotPickLeadMinutes: int(env, 'PICKING_SLOT_LEAD_MINUTES', 30, 0),
    expressPickMinutes: int(env, 'PICKING_EXPRESS_MINUTES', 15, 0),
    queueHorizonHours: int(env, 'PICKING_QUEUE_HORIZON_HOURS', 24, 1),
    realtimeHeartbeatSeconds: int(env, 'PICKER_WS_HEARTBEAT_SECONDS', 30, 1),
    batch: {
      maxOrders: int(env, 'PICKING_BATCH_MAX_ORDERS', 3, 1),
      maxLines: int(env, 'PICKING_BATCH_MAX_LINES', 120, 1),
      dueWindowMinutes: int(env, 'PICKING_BATCH_DUE_WINDOW_MINUTES', 60, 0),
    },
  };
}

/** The loyalty wallet: which provider, its deadlines, caches and the background worker. */
export interface LoyaltyConfig {
  /** `local`: the ledger kept in PostgreSQL (works offline); `cdp`: a customer data platform over HTTP. */
  provider: 'local' | 'cdp';
  cdpUrl: string | null;
  cdpToken: string | null;
  /** Deadline of provider reads (programs, look-ups, purchases, transactions). */
  readTimeoutMs: number;
  /** Deadline of card commands; past it the command answers `accepted` and the wallet turns `pending`. */
  commandTimeoutMs: number;
  programsCacheSeconds: number;
  /** GET wallet enqueues a background re-sync when the data is older than this. */
  walletResyncSeconds: number;
  /** The mirror of in-store purchases is refreshed when older than this. */
  purchasesRefreshSeconds: number;
  /** First retry delay of provisioning and reconciliation; doubles with each attempt. */
  retryBaseSeconds: number;
  /** Card look-ups (link previews and links) per customer in `cardLookupWindowSeconds`. */
  cardLookupsPerWindow: number;
  cardLookupWindowSeconds: number;
  /** Base URL of the QR images of virtual cards issued by the local ledger (`<base>/<card number>.png`). */
  qrBaseUrl: string;
  worker: { enabled: boolean; intervalMs: number };
}

function loyaltyConfig(env: NodeJS.ProcessEnv): LoyaltyConfig {
  const provider = (env.LOYALTY_PROVIDER ?? 'local').toLowerCase();
  if (provider !== 'local' && provider !== 'cdp') throw new Error(`LOYALTY_PROVIDER must be local or cdp, got "${env.LOYALTY_PROVIDER}"`);
  const cdpUrl = env.LOYALTY_CDP_URL ? env.LOYALTY_CDP_URL.replace(/\/+$/, '') : null;
  if (provider === 'cdp' && !cdpUrl) throw new Error('LOYALTY_PROVIDER=cdp needs LOYALTY_CDP_URL');
  return {
    provider,
    cdpUrl,
    cdpToken: env.LOYALTY_CDP_TOKEN || null,
    readTimeoutMs: int(env, 'LOYALTY_READ_TIMEOUT_MS', 3000, 50),
    commandTimeoutMs: int(env, 'LOYALTY_COMMAND_TIMEOUT_MS', 10_000, 50),
    programsCacheSeconds: int(env, 'LOYALTY_PROGRAMS_CACHE_SECONDS', 600, 0),
    walletResyncSeconds: int(env, 'LOYALTY_WALLET_RESYNC_SECONDS', 300, 1),
    purchasesRefreshSeconds: int(env, 'LOYALTY_PURCHASES_REFRESH_SECONDS', 300, 0),
    retryBaseSeconds: int(env, 'LOYALTY_RETRY_BASE_SECONDS', 60, 0),
    cardLookupsPerWindow: int(env, 'LOYALTY_CARD_LOOKUPS_PER_WINDOW', 10, 1),
    cardLookupWindowSeconds: int(env, 'LOYALTY_CARD_LOOKUP_WINDOW_SECONDS', 600, 1),
    qrBaseUrl: (env.LOYALTY_QR_BASE_URL || 'https://cdn.grocery.example/loyalty/qr').replace(/\/+$/, ''),
    worker: { enabled: bool(env, 'LOYALTY_WORKER_ENABLED', true), intervalMs: int(env, 'LOYALTY_WORKER_INTERVAL_MS', 1000, 50) },
  };
}

/**
 * The folder of package.json: the checkout when run from source, the installed application when
 * run built (dist/platform/config.js sits one folder deeper than platform/config.ts).
 */
export const projectRoot = packageRoot(import.meta.dirname);
/** What the build derives from spec/ and ships beside the code: generated/ here, dist/generated/ built. */
export const generatedDir = path.resolve(import.meta.dirname, '..', 'generated');

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..');
  }
}

/** The commit `npm run build` recorded in dist/build-info.json; a built copy has no git. */
function builtCommit(): string | null {
  const file = path.resolve(import.meta.dirname, '..', 'build-info.json');
  if (!existsSync(file)) return null;
  const { commit } = JSON.parse(readFileSync(file, 'utf8')) as { commit?: string };
  return commit || null;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const appEnv = (env.APP_ENV ?? 'TEST').toUpperCase();
  if (appEnv !== 'TEST' && appEnv !== 'PROD') throw new Error(`APP_ENV must be TEST or PROD, got "${env.APP_ENV}"`);
  const dataDir = path.resolve(projectRoot, env.DATA_DIR || '.data');
  const databaseUrl = env.DATABASE_URL || null;
  if (appEnv === 'PROD') {
    if (!env.JWT_SECRET || env.JWT_SECRET.length < 32)
      throw new Error('PROD needs JWT_SECRET of at least 32 characters: set it to a random secret (openssl rand -base64 48)');
    if (!databaseUrl) throw new Error('PROD needs DATABASE_URL (the embedded database is for development and tests)');
  }
  // A variable set to nothing (`VAR=` from a template) is unset, never an empty key.
  const jwtSecret = env.JWT_SECRET || localSecret(dataDir);
  if (env.OTP_HMAC_KEY && env.OTP_HMAC_KEY.length < 32) throw new Error('OTP_HMAC_KEY must be at least 32 characters');
  if (smsProvider(env.SMS_PROVIDER) === 'http' && !env.SMS_HTTP_URL) throw new Error('SMS_PROVIDER=http needs SMS_HTTP_URL');
  const logLevel = (env.LOG_LEVEL ?? 'info') as Config['logLevel'];
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) throw new Error(`LOG_LEVEL "${logLevel}" is not known`);
  return {
    env: appEnv,
    host: env.HOST ?? '0.0.0.0',
    port: int(env, 'PORT', 8080),
    databaseUrl,
    databaseDirectUrl: env.DATABASE_DIRECT_URL || null,
    dbNamedStatements: bool(env, 'DB_NAMED_STATEMENTS', true),
    databaseReadUrl: env.DATABASE_READ_URL || null,
    readReplica: {
      maxLagSeconds: int(env, 'READ_REPLICA_MAX_LAG_SECONDS', 5, 1),
      retrySeconds: int(env, 'READ_REPLICA_RETRY_SECONDS', 5, 1),
    },
    dataDir,
    dbPoolMax: int(env, 'DB_POOL_MAX', 20, 1),
    // A request waits at most about the pool's wait plus one lock wait (under 2 s) before it
    // answers 503 with Retry-After: a phone's HTTP stack gives up not much later.
    dbLimits: {
      statementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 5_000, 0),
      lockTimeoutMs: int(env, 'DB_LOCK_TIMEOUT_MS', 500, 0),
      idleInTransactionTimeoutMs: int(env, 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 30_000, 0),
      poolTimeoutMs: int(env, 'DB_POOL_TIMEOUT_MS', 1_000, 1),
    },
    dbJobsPoolMax: int(env, 'DB_JOBS_POOL_MAX', 4, 1),
    dbJobLimits: {
      statementTimeoutMs: int(env, 'DB_JOBS_STATEMENT_TIMEOUT_MS', 60_000, 0),
      lockTimeoutMs: int(env, 'DB_JOBS_LOCK_TIMEOUT_MS', 15_000, 0),
      idleInTransactionTimeoutMs: int(env, 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 30_000, 0),
      poolTimeoutMs: int(env, 'DB_JOBS_POOL_TIMEOUT_MS', 30_000, 1),
    },
    buildCommit: env.BUILD_COMMIT || builtCommit() || gitCommit(projectRoot),
    jwt: {
      secret: jwtSecret,
      issuer: env.JWT_ISSUER || 'grocery-service',
      accessTtlSeconds: int(env, 'ACCESS_TOKEN_TTL_SECONDS', 15 * 60, 1),
      refreshTtlSeconds: int(env, 'REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600, 1),
      refreshReuseGraceSeconds: int(env, 'REFRESH_REUSE_GRACE_SECONDS', 30, 0),
      recoveryTtlSeconds: int(env, 'RECOVERY_TOKEN_TTL_SECONDS', 10 * 60, 1),
    },
    auth: {
      otpHmacKey: env.OTP_HMAC_KEY || createHash('sha256').update(`otp:${jwtSecret}`).digest('base64url'),
      otpTtlSeconds: int(env, 'OTP_TTL_SECONDS', 300, 30),
      otpMaxAttempts: int(env, 'OTP_MAX_ATTEMPTS', 5, 1),
      otpResendCooldownSeconds: int(env, 'OTP_RESEND_COOLDOWN_SECONDS', 60, 0),
      otpMaxSendsPerHour: int(env, 'OTP_MAX_SENDS_PER_HOUR', 5, 1),
      // The QA operation exists only in TEST; in PROD no phone is a test phone, whatever is set.
      otpTestPhonePrefixes:
        appEnv === 'PROD'
          ? []
          : (env.OTP_TEST_PHONE_PREFIXES ?? '+7999000')
              .split(',')
              .map((p) => p.trim())
              .filter(Boolean),
      pinMaxFailures: int(env, 'PIN_MAX_FAILURES', 5, 1),
      pickerMaxFailures: int(env, 'PICKER_MAX_FAILURES', 10, 1),
      lockoutSeconds: int(env, 'SIGN_IN_LOCKOUT_SECONDS', 15 * 60, 1),
      ipRequestsPerMinute: int(env, 'SIGN_IN_IP_REQUESTS_PER_MINUTE', 120, 1),
    },
    sms: {
      provider: smsProvider(env.SMS_PROVIDER),
      httpUrl: env.SMS_HTTP_URL || null,
      httpToken: env.SMS_HTTP_TOKEN || null,
      timeoutMs: int(env, 'SMS_TIMEOUT_MS', 5000, 100),
      sender: env.SMS_SENDER ?? 'Grocery',
    },
    trustProxyHops: int(env, 'TRUST_PROXY_HOPS', 0),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000),
    readinessMaxEventLoopDelayMs: int(env, 'READINESS_MAX_EVENT_LOOP_DELAY_MS', 1000, 0),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0),
    shutdownDelayMs: int(env, 'SHUTDOWN_DELAY_MS', 5_000, 0),
    wsMaxSocketsPerAccount: int(env, 'WS_MAX_SOCKETS_PER_ACCOUNT', 10, 0),
    wsMaxBufferedBytes: int(env, 'WS_MAX_BUFFERED_BYTES', 256 * 1024, 0),
    validateResponses: bool(env, 'VALIDATE_RESPONSES', appEnv === 'TEST'),
    logLevel,
    // The exporter itself reads the OTEL_EXPORTER_OTLP_* variables; this decides whether to load it.
    tracing: { otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || null, serviceName: env.OTEL_SERVICE_NAME || 'grocery-service' },
    seedDemoData: bool(env, 'SEED_DEMO_DATA', !databaseUrl),
    warmValidators: bool(env, 'WARM_VALIDATORS', true),
    storeCacheSeconds: int(env, 'STORE_CACHE_SECONDS', 5),
    logistics: logisticsConfig(env),
    catalog: catalogConfig(env),
    orders: ordersConfig(env),
    metrics: metricsConfig(env),
    picking: pickingConfig(env),
    loyalty: loyaltyConfig(env),
  };
}

/**
 * The providers of a PROD configuration that only pretend (for development and TEST): no SMS
 * reaches a phone, no bank takes money, no courier moves. PROD starts with them (a staging stand
 * may want that) but says so loudly at every start.
 */
export function developmentProvidersIn(config: Config): string[] {
  if (config.env !== 'PROD') return [];
  const found: string[] = [];
  if (config.sms.provider === 'log') found.push('SMS_PROVIDER=log (codes are only logged)');
  if (config.orders.bank.provider === 'sandbox')
    found.push('BANK_PROVIDER=sandbox (invoices cannot be paid: its QA operation is TEST only)');
  if (config.orders.courier.provider === 'simulator')
    found.push('COURIER_PROVIDER=simulator (deliveries never move: its QA operation is TEST only)');
  if (config.orders.push.provider === 'recording') found.push('PUSH_PROVIDER=recording (no push leaves the service)');
  if (config.loyalty.provider === 'local') found.push('LOYALTY_PROVIDER=local (wallets live in this database only)');
  return found;
}
