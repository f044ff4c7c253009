import { isIP } from 'node:net';
import { Type, type Static } from 'typebox';
import Value from 'typebox/value';

/** log2 of scrypt's N for dashboard passwords: N = 2^15 (with r = 8, p = 1) is OWASP's scrypt floor, ~120 ms of CPU per hash. */
export const PASSWORD_COST_EXPONENT = 15;

/** How many deliveries one webhook recover call queues at most; the answer says how many are left. */
export const WEBHOOK_RECOVER_BATCH = 10_000;

/**
 * Every setting the process reads from the environment. Values arrive as strings; the schema
 * converts them, fills defaults and fails fast with the names of the bad variables.
 */
const BooleanText = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  /**
   * This machine only unless told otherwise (decision 090): a laptop's sandbox keys and admin
   * token are not the LAN's. A server behind a load balancer or in a container sets 0.0.0.0.
   */
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /**
   * PostgreSQL itself, for what a pooler in transaction mode does not carry (LISTEN) when
   * DATABASE_URL goes through one (PgBouncer, decision 095). Unset: DATABASE_URL.
   */
  DATABASE_LISTEN_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  PAY_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** `false`, a hop count (`true` = 1), or a comma-separated list of proxy addresses/CIDRs. */
  TRUST_PROXY: Type.String({ maxLength: 2000, pattern: '^[A-Za-z0-9.:/, ]+$' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  WEBHOOK_ALLOW_PRIVATE: BooleanText,
  WEBHOOK_RETRY_SCALE: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: 1 }),
  WEBHOOK_DISABLE_AFTER_HOURS: Type.Number({ exclusiveMinimum: 0, default: 120 }),
  WEBHOOK_DISABLE_WARNING_HOURS: Type.Number({ minimum: 0, default: 24 }),
  /** The operator's notification hook (decision 078): each new payment request is POSTed there. Unset: off. */
  OPERATOR_HOOK_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** The hook's Standard Webhooks secret (`whsec_` and base64 of 24 to 64 bytes); required with the URL. */
  OPERATOR_HOOK_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  RATE_LIMIT_TEST_PER_MINUTE: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_LIVE_PER_MINUTE: Type.Integer({ minimum: 1, default: 1000 }),
  KEY_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 5000, default: 3000 }),
  DB_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 500, default: 20 }),
  /** `false` behind a pooler in transaction mode (PgBouncer): see db/database.ts, `namedStatements`. */
  DB_PREPARED_STATEMENTS: BooleanText,
  INTENT_MAX_AMOUNT: Type.Integer({ minimum: 1, default: 100_000_000 }),
  /** A business's sandbox payouts waiting to be sent, at most (decision 067): two full batches. */
  SANDBOX_PENDING_PAYOUTS_MAX: Type.Integer({ minimum: 1, default: 2000 }),
  /** A payment waiting for its payer's answer (PROCESSING) ends FAILED `TIMED_OUT` after this long. */
  PAYMENT_PROCESSING_TIMEOUT_SECONDS: Type.Integer({ minimum: 10, maximum: 86_400, default: 900 }),
  SEED_DEMO: BooleanText,
  DASHBOARD_SESSION_IDLE_MINUTES: Type.Integer({ minimum: 1, maximum: 10_080, default: 60 }),
  DASHBOARD_LOGIN_PER_MINUTE_IP: Type.Integer({ minimum: 1, default: 20 }),
  DASHBOARD_LOGIN_PER_MINUTE_EMAIL: Type.Integer({ minimum: 1, default: 5 }),
  /** A download (export, statement file) whose client took nothing for this long is ended. */
  DOWNLOAD_STALL_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 3600, default: 30 }),
  /** Downloads one business may have running at once in one environment, in one process. */
  DOWNLOADS_PER_BUSINESS: Type.Integer({ minimum: 1, maximum: 1000, default: 4 }),
  /** Retention (decision 093): days each kind of row is kept after it ended; money records are never deleted. */
  WEBHOOK_ATTEMPT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 30 }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 90 }),
  /** The Events API promises at least 30 days (docs/webhooks.md). */
  EVENT_RETENTION_DAYS: Type.Integer({ minimum: 30, maximum: 36_500, default: 90 }),
  DASHBOARD_SESSION_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 30 }),
  PAYMENT_REQUEST_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 90 }),
});

/** The settings as the process uses them: the type follows the schema through `toConfig`. */
export type Config = ReturnType<typeof toConfig>;

export class ConfigError extends Error {}

const booleanDefaults: Record<string, string> = {
  TRUST_PROXY: 'false',
  WEBHOOK_ALLOW_PRIVATE: 'false',
  SEED_DEMO: 'true',
  DB_PREPARED_STATEMENTS: 'true',
};

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY as Fastify's `trustProxy` takes it, minus "trust every hop" (the client writes the
 * left-most X-Forwarded-For): `false`/`0`, a hop count (`true` = 1, one load balancer), or a list
 * of proxy addresses, CIDR ranges and proxy-addr names (loopback, linklocal, uniquelocal).
 */
export function parseTrustProxy(text: string): false | number | string[] {
  const value = text.trim().toLowerCase();
  if (value === 'false' || value === '0') return false;
  if (value === 'true') return 1;
  if (/^[0-9]{1,2}$/.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (PROXY_NAMES.has(entry)) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    if (!version || extra !== undefined || (prefix !== undefined && !(/^[0-9]{1,3}$/.test(prefix) && +prefix <= bits)))
      throw new ConfigError(
        `Invalid configuration:\n  TRUST_PROXY=${JSON.stringify(text)}: "${entry}" is not a hop count, an address, a CIDR range or loopback/linklocal/uniquelocal`,
      );
  }
  return entries.length ? entries : false;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, unknown> = {};
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') input[name] = value;
    else if (name in booleanDefaults) input[name] = booleanDefaults[name];
  }
  const withDefaults = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, input));
  if (!Value.Check(ConfigSchema, withDefaults)) {
    const problems = new Map<string, string>();
    for (const error of Value.Errors(ConfigSchema, withDefaults)) {
      const name = error.instancePath.replace(/^\//, '') || 'config';
      if (!problems.has(name)) problems.set(name, `${name}=${JSON.stringify(input[name])}: ${error.message}`);
    }
    throw new ConfigError(`Invalid configuration:\n  ${[...problems.values()].join('\n  ')}`);
  }
  checkOperatorHook(withDefaults);
  checkRetention(withDefaults);
  return toConfig(withDefaults);
}

/** A Standard Webhooks secret: `whsec_` then base64 of 24 to 64 random bytes (the spec's bounds). */
const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The hook is on only with a secret receivers can check: a URL without one (or with a malformed
 * one) stops the start rather than sending notices nobody can verify, and plain http is refused
 * unless WEBHOOK_ALLOW_PRIVATE says this is a development machine.
 */
function checkOperatorHook(raw: Static<typeof ConfigSchema>): void {
  const problems: string[] = [];
  const secret = raw.OPERATOR_HOOK_SECRET;
  const bytes = secret && STANDARD_SECRET.test(secret) ? Buffer.from(secret.slice(6), 'base64').length : 0;
  if (secret !== undefined && (bytes < 24 || bytes > 64)) {
    problems.push(
      'OPERATOR_HOOK_SECRET: must be a Standard Webhooks secret, "whsec_" followed by the base64 of 24 to 64 random bytes (for example: echo "whsec_$(openssl rand -base64 32)")',
    );
  }
  if (raw.OPERATOR_HOOK_URL !== undefined) {
    if (secret === undefined) {
      problems.push(
        'OPERATOR_HOOK_SECRET: required when OPERATOR_HOOK_URL is set (receivers verify the signature with it)',
      );
    }
    if (raw.OPERATOR_HOOK_URL.startsWith('http://') && !flag(raw.WEBHOOK_ALLOW_PRIVATE)) {
      problems.push(
        `OPERATOR_HOOK_URL=${JSON.stringify(raw.OPERATOR_HOOK_URL)}: must use https (http only with WEBHOOK_ALLOW_PRIVATE=true, for development)`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
}

/**
 * A delivery outlives its attempts and its event outlives it: the delivery log never shows a
 * delivery whose event is gone, and an attempt never loses its delivery.
 */
function checkRetention(raw: Static<typeof ConfigSchema>): void {
  const order = [
    ['EVENT_RETENTION_DAYS', raw.EVENT_RETENTION_DAYS],
    ['WEBHOOK_DELIVERY_RETENTION_DAYS', raw.WEBHOOK_DELIVERY_RETENTION_DAYS],
    ['WEBHOOK_ATTEMPT_RETENTION_DAYS', raw.WEBHOOK_ATTEMPT_RETENTION_DAYS],
  ] as const;
  const problems: string[] = [];
  for (let i = 1; i < order.length; i++) {
    const [longer, longerDays] = order[i - 1]!;
    const [shorter, shorterDays] = order[i]!;
    if (shorterDays > longerDays)
      problems.push(`${shorter}=${shorterDays}: must not be more than ${longer}=${longerDays}`);
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
}

/**
 * A run of a retention task (db/batched-delete.ts): rows per batch, each batch its own
 * transaction, and how much one run may do before it leaves the rest to its next run.
 */
export interface BatchBudget {
  rows: number;
  maxBatches: number;
  maxMs: number;
}

export const RETENTION_BATCHES: BatchBudget = { rows: 1000, maxBatches: 500, maxMs: 5_000 };

const flag = (value: string) => value === 'true' || value === '1';

function toConfig(raw: Static<typeof ConfigSchema>) {
  return {
    port: raw.PORT,
    host: raw.HOST,
    databaseUrl: raw.DATABASE_URL,
    databaseListenUrl: raw.DATABASE_LISTEN_URL,
    dataDir: raw.DATA_DIR,
    redisUrl: raw.REDIS_URL,
    publicUrl: raw.PUBLIC_URL?.replace(/\/+$/, ''),
    payUrl: raw.PAY_URL?.replace(/\/+$/, ''),
    adminToken: raw.ADMIN_TOKEN,
    trustProxy: parseTrustProxy(raw.TRUST_PROXY),
    logLevel: raw.LOG_LEVEL,
    webhookAllowPrivate: flag(raw.WEBHOOK_ALLOW_PRIVATE),
    webhookRetryScale: raw.WEBHOOK_RETRY_SCALE,
    webhookDisableAfterHours: raw.WEBHOOK_DISABLE_AFTER_HOURS,
    webhookDisableWarningHours: raw.WEBHOOK_DISABLE_WARNING_HOURS,
    /** Where each new payment request is told (decision 078); undefined: off, nothing is queued. */
    operatorHook:
      raw.OPERATOR_HOOK_URL !== undefined && raw.OPERATOR_HOOK_SECRET !== undefined
        ? { url: raw.OPERATOR_HOOK_URL, secret: raw.OPERATOR_HOOK_SECRET }
        : undefined,
    rateLimitPerMinute: { test: raw.RATE_LIMIT_TEST_PER_MINUTE, live: raw.RATE_LIMIT_LIVE_PER_MINUTE },
    keyCacheTtlMs: raw.KEY_CACHE_TTL_MS,
    dbPoolSize: raw.DB_POOL_SIZE,
    dbPreparedStatements: flag(raw.DB_PREPARED_STATEMENTS),
    intentMaxAmount: raw.INTENT_MAX_AMOUNT,
    sandboxPendingPayoutsMax: raw.SANDBOX_PENDING_PAYOUTS_MAX,
    paymentProcessingTimeoutSeconds: raw.PAYMENT_PROCESSING_TIMEOUT_SECONDS,
    metricsToken: raw.METRICS_TOKEN,
    /**
     * How many 6-digit codes may be handed out (000000 up to this minus one). Always 1,000,000 from
     * the environment; tests narrow it to reach a full code space without a million rows.
     */
    paymentCodeSpace: 1_000_000,
    /** api.md 6.1: a receiver has 30 s to answer. Not from the environment; tests shorten it. */
    webhookTimeoutMs: 30_000,
    /** Opening a receiver's connection (DNS, TCP, TLS) within the 30 s. Tests shorten it. */
    webhookConnectTimeoutMs: 5_000,
    /**
     * A recover call's limit. Not from the environment; the quick tests narrow it to check the
     * limit, the count left and the spreading on a few dozen rows (the full size is the slow tier's).
     */
    webhookRecoverBatch: WEBHOOK_RECOVER_BATCH,
    /**
     * The wallet app's live stream: a notification wakes it at once; this slow poll only covers a
     * lost listener, and the session check ends a stream whose session ended. Not from the
     * environment; tests shorten the session check.
     */
    walletStream: { pollMs: 5_000, sessionCheckMs: 60_000 },
    seedDemo: flag(raw.SEED_DEMO),
    retention: {
      webhookAttemptDays: raw.WEBHOOK_ATTEMPT_RETENTION_DAYS,
      webhookDeliveryDays: raw.WEBHOOK_DELIVERY_RETENTION_DAYS,
      eventDays: raw.EVENT_RETENTION_DAYS,
      dashboardSessionDays: raw.DASHBOARD_SESSION_RETENTION_DAYS,
      paymentRequestDays: raw.PAYMENT_REQUEST_RETENTION_DAYS,
      /** Not from the environment; tests narrow it to stop a run after a batch or two. */
      batches: { ...RETENTION_BATCHES },
    },
    downloads: { stallMs: Math.round(raw.DOWNLOAD_STALL_SECONDS * 1000), perBusiness: raw.DOWNLOADS_PER_BUSINESS },
    dashboard: {
      sessionIdleMinutes: raw.DASHBOARD_SESSION_IDLE_MINUTES,
      loginPerMinute: { ip: raw.DASHBOARD_LOGIN_PER_MINUTE_IP, email: raw.DASHBOARD_LOGIN_PER_MINUTE_EMAIL },
      /**
       * log2 of scrypt's N for new password hashes. Not from the environment; tests lower it (a
       * hash at the default costs ~120 ms of CPU, and the suite signs in some 150 times).
       */
      passwordCost: PASSWORD_COST_EXPONENT,
    },
  };
}
