import path from 'node:path';
import { z } from 'zod';
import { measurementConfig } from './measurement-settings';
import { webhookConfig } from './webhook-settings';
import { browserConfig } from './browser-settings';
import { sellerBillingConfig } from './seller-billing';
import { personaModelConfig } from './persona-model-settings';
import { AdcpSellersSchema } from './adcp-sellers';

/**
 * Every environment variable the service reads, validated once at start.
 * A bad value stops the process with a message naming the variable.
 */
const boolish = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const trustProxy = z.string().transform((v, ctx) => {
  if (v === 'true') return true as const;
  if (v === 'false') return false as const;
  if (/^\d+$/.test(v)) return Number(v);
  // A comma-separated list of addresses or subnets, as express understands it.
  if (/^[0-9a-fA-F.:/,\s]+$/.test(v) || /^(loopback|linklocal|uniquelocal)(,\s*(loopback|linklocal|uniquelocal))*$/.test(v)) {
    return v;
  }
  ctx.addIssue({ code: 'custom', message: 'expected true, false, a hop count, or addresses/subnets' });
  return z.NEVER;
});

/** A comma-separated setting as its trimmed, non-empty items. */
const commaList = (v: string) =>
  v
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const ConfigFields = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Default 0.0.0.0, or 127.0.0.1 while the development issuer signs tokens (ConfigSchema below). */
  HOST: z.string().min(1).optional(),
  /** Listen beyond loopback although the development issuer and its sign-in are in use. */
  DEV_AUTH_ALLOW_REMOTE: boolish.default(false),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /**
   * A Redis Cluster's seed nodes, `host:port,host:port,...`: every connection becomes a cluster
   * client (credentials and TLS from REDIS_URL, when it is set). Empty: the single Redis at REDIS_URL.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .default('')
    .transform(commaList)
    .pipe(z.array(z.string().regex(/^[^\s:,]+:\d{1,5}$/, 'each node is host:port')).max(64)),
  REDIS_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9:_-]*$/i)
    .default('flightdeck'),
  AUTH_ISSUER: z.string().min(1).optional(),
  AUTH_AUDIENCE: z.string().min(1).default('https://api.flightdeck.dev'),
  AUTH_JWKS_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Minimum seconds between JWKS refetches when an unknown key id arrives. */
  AUTH_JWKS_COOLDOWN_MS: z.coerce.number().int().min(0).default(30_000),
  /** How long fetched keys count as fresh before the JWKS is fetched again. */
  AUTH_JWKS_CACHE_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 60_000),
  /** While the identity provider is unreachable, keys it last published are still used for this long. */
  AUTH_JWKS_MAX_STALE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 60 * 60_000),
  /** Server-side bounds on every database connection (0 turns one off) and on waiting for a pool connection. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).default(5_000),
  DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * `transaction` when DATABASE_URL points at a pooler in transaction mode (PgBouncer
   * pool_mode=transaction): per-connection settings would not follow a client from one server
   * connection to the next, so the timeouts above must be the database role's defaults instead.
   */
  DB_POOLER: z.enum(['none', 'transaction']).default('none'),
  /** On SIGTERM, how long in-flight requests may run before their connections are closed. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(9_000).default(5_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Comma-separated queues or roles (suppliers, creative-reviews, audiences, personas, webhooks,
   * browser, housekeeping, pixel) this worker process consumes; empty means all. The workers expand the
   * roles, and refuse names they do not know, when they start (`workerQueuesOf`).
   */
  WORKER_QUEUES: z
    .string()
    .default('')
    .transform(commaList)
    .pipe(z.array(z.string().regex(/^[a-z][a-z0-9.-]*$/, 'queue names are lower-case, e.g. supplier.sandbox-ctv'))),
  /** How many API processes `npm start` and `npm run start:web` run behind the one port (node cluster). */
  API_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  EXECUTION_MODE_DEFAULT: z.enum(['sandbox', 'live']).default('sandbox'),
  BILLING_MODE: z.enum(['sandbox', 'live']).default('sandbox'),
  /** Live billing: the payment provider's secret API key and webhook signing secret. */
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  /**
   * Encrypts secrets kept to be used again (webhook signing secrets) at rest: 32 bytes, base64
   * (`openssl rand -base64 32`). Required in production; development uses a fixed key.
   */
  SECRETS_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$/, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)')
    .optional(),
  /** Keys SECRETS_KEY replaced, comma-separated: secrets sealed under them still open, and are sealed again under SECRETS_KEY at start. */
  SECRETS_KEY_PREVIOUS: z
    .string()
    .default('')
    .transform(commaList)
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'each key is 32 bytes, base64-encoded')).max(8)),
  /** Another address for the provider's API (a proxy, or stripe-mock in a test environment). */
  STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Sandbox billing signs its own events with this; it guards nothing of value. */
  BILLING_SANDBOX_WEBHOOK_SECRET: z.string().min(16).default('whsec_flightdeck_sandbox_events'),
  /** Bounds of one wallet top-up, in GBP minor units. */
  BILLING_TOPUP_MIN_MINOR: z.coerce.number().int().min(1).default(1_000),
  BILLING_TOPUP_MAX_MINOR: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(10_000_000),
  /** The scale tier applies to a month when media spend over this many full months before it reaches the threshold. */
  BILLING_SCALE_TRAILING_MONTHS: z.coerce.number().int().min(1).max(12).default(3),
  BILLING_SCALE_THRESHOLD_MINOR: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(15_000_000),
  /** Where people reach this service (checkout return links); defaults to http://localhost:PORT. */
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  TRUST_PROXY: trustProxy.default(false),
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).default(60_000),
  RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(300),
  RATE_LIMIT_EXTRACT_MAX: z.coerce.number().int().min(1).default(30),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  DATA_DIR: z.string().min(1).default('.data'),
  /** Largest creative asset an upload may carry. */
  ASSET_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(20 * 1024 * 1024),
  ASSET_DIR: z.string().min(1).optional(),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).default(54329),
  REDIS_AUTOSTART: boolish.default(true),
  HEARTBEAT_TTL_MS: z.coerce.number().int().min(1000).default(30_000),
  /** Supplier workers: how many jobs each adapter's worker runs at once, unless ADAPTER_SETTINGS says otherwise. */
  ADAPTER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(5),
  /** Per-adapter concurrency and rate limit, e.g. {"sandbox-ctv":{"concurrency":2,"rateMax":10,"rateDurationMs":1000}}. */
  ADAPTER_SETTINGS: z
    .string()
    .default('{}')
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(
        z.string().regex(/^[a-z][a-z0-9-]*$/),
        z.strictObject({
          concurrency: z.number().int().min(1).max(100).optional(),
          rateMax: z.number().int().min(1).optional(),
          rateDurationMs: z.number().int().min(1).optional(),
        }),
      ),
    ),
  /** AdCP sellers, each the adapter `adcp-<key>` (see adcp-sellers.ts and docs/adcp.md). */
  ADCP_SELLERS: AdcpSellersSchema,
  /** How often a booking a seller is still working on is asked about (tasks/get), at the least. */
  ADCP_TASK_POLL_INTERVAL_MS: z.coerce.number().int().min(50).default(60_000),
  /** How long a seller may hold a creative's review undecided (pending_review) before a person takes it over. */
  ADCP_REVIEW_MAX_WAIT_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(7 * 24),
  /** How long a seller may keep a booking it accepted (submitted, working) unfinished, or unanswerable, before a person takes it over. */
  ADCP_TASK_MAX_WAIT_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(72),
  /** How long a seller's capabilities (get_adcp_capabilities) are kept before they are asked again. */
  ADCP_CAPABILITIES_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 60_000),
  /** How long a supplier call may take before its outcome counts as unknown. */
  SUPPLIER_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * After the timeout, how long a supplier's answer is still waited for (no resend meanwhile):
   * what it answers is kept on the attempt as late evidence for whoever reconciles the line.
   */
  SUPPLIER_LATE_ANSWER_MS: z.coerce.number().int().min(0).default(60_000),
  /** An attempt still open this long after its call timed out, with no live job, goes to reconciliation. */
  ATTEMPT_STUCK_GRACE_MS: z.coerce.number().int().min(0).default(120_000),
  /** BullMQ job lock and stalled-job check: how soon a crashed worker's job is noticed. */
  WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(500).default(30_000),
  WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  OUTBOX_RELAY_INTERVAL_MS: z.coerce.number().int().min(50).default(1000),
  /** Delivery (docs/delivery.md): how often each supplier queue asks for running lines' figures. */
  DELIVERY_POLL_EVERY_MS: z.coerce.number().int().min(1_000).default(900_000),
  /** Lines asked in one batch, and at most this many supplier calls a second per supplier queue. */
  DELIVERY_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(200),
  DELIVERY_CALLS_PER_SECOND: z.coerce.number().int().min(1).max(1_000).default(20),
  /** Days after a day in which suppliers may still restate it; closeout waits this long after a flight. */
  DELIVERY_RESTATEMENT_DAYS: z.coerce.number().int().min(0).max(60).default(7),
  /** A line is off pace when its spend differs from the expected by more than this share. */
  DELIVERY_PACING_TOLERANCE: z.coerce.number().min(0.01).max(1).default(0.15),
  /** Spend after a pause or stop (or beyond a new budget) tolerated as impressions in flight, in percent of the line's budget. */
  CONTROL_TOLERANCE_PERCENT: z.coerce.number().min(0).max(10).default(1),
  /** Hours after a day before a supplier's figures for it prove a change, for suppliers that state none (docs/bookings.md). */
  CONTROL_REPORTING_DELAY_HOURS: z.coerce.number().int().min(0).max(168).default(6),
  /** How long the sandbox "slow" trigger takes. */
  SANDBOX_SLOW_MS: z.coerce.number().int().min(0).default(3000),
  /** How long the API waits for a persona-extract worker before answering 503. */
  PERSONA_EXTRACT_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** When a booking's suppliers are due to have confirmed it. */
  CONFIRMATION_SLA_HOURS: z.coerce.number().int().min(1).default(48),
  ...measurementConfig,
  ...webhookConfig,
  ...browserConfig,
  ...sellerBillingConfig,
  ...personaModelConfig,
  /** The agent endpoint's exact URL: the audience of its tokens. Default http://localhost:$PORT/mcp. */
  MCP_RESOURCE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The authorization server for /mcp; unset in development means the embedded one under /oauth. */
  MCP_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  /** The one OAuth scope of the agent endpoint. */
  MCP_SCOPE: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)
    .default('flightdeck'),
  /** The embedded server's pre-registered public client. */
  MCP_CLIENT_ID: z.string().min(1).max(200).default('flightdeck-assistant'),
  /** Its exact redirect URLs, comma-separated. */
  MCP_REDIRECT_URIS: z
    .string()
    .default('http://localhost:6274/oauth/callback,http://localhost:6274/oauth/callback/debug')
    .transform(commaList)
    .pipe(z.array(z.url({ protocol: /^https?$/ })).min(1)),
  /**
   * Whether the embedded server accepts clients nobody registered: a client id that is the https
   * URL of its Client ID Metadata Document (docs/mcp.md, "Connect your own agent").
   */
  MCP_CLIENT_ID_METADATA_DOCUMENTS: boolish.default(true),
  /**
   * Development only: metadata documents on loopback addresses (this machine) may be fetched, their
   * certificate unchecked. Refused with NODE_ENV=production.
   */
  MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK: boolish.default(false),
  /** The endpoint's own client at the issuer, used for the token exchange (RFC 8693). */
  MCP_EXCHANGE_CLIENT_ID: z.string().min(1).max(200).default('flightdeck-mcp-resource'),
  MCP_EXCHANGE_CLIENT_SECRET: z.string().min(16).optional(),
  /** How long the embedded server's exchanged API credential lives. */
  MCP_API_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(3600).default(300),
  /** The console's OpenID provider; unset in development means the embedded one under /oauth. */
  CONSOLE_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  /** The console's client at that provider (authorization code + PKCE; redirect $PUBLIC_BASE_URL/console/callback). */
  CONSOLE_CLIENT_ID: z.string().min(1).max(200).default('flightdeck-console'),
  /** Set when the provider registers the console as a confidential client. */
  CONSOLE_CLIENT_SECRET: z.string().min(16).optional(),
});

export const ConfigSchema = ConfigFields.transform((c) => ({
  ...c,
  // Without AUTH_JWKS_URL the development issuer signs tokens and anyone may sign in as anyone at
  // its sign-in page: reachable only from this machine unless someone chose otherwise.
  HOST: c.HOST ?? (c.AUTH_JWKS_URL ? '0.0.0.0' : '127.0.0.1'),
}));

export type Config = z.output<typeof ConfigSchema>;

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(host);

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings in the environment mean "unset", as they do in most shells and compose files.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  if (config.NODE_ENV === 'production') {
    const missing: string[] = [];
    if (!config.DATABASE_URL) missing.push('DATABASE_URL (the embedded database is for development only)');
    if (!config.AUTH_JWKS_URL) missing.push('AUTH_JWKS_URL (the development issuer is refused in production)');
    if (!config.AUTH_ISSUER) missing.push('AUTH_ISSUER');
    if (!config.REDIS_URL && !config.REDIS_CLUSTER_NODES.length) missing.push('REDIS_URL (or REDIS_CLUSTER_NODES)');
    if (!config.SECRETS_KEY) missing.push('SECRETS_KEY (webhook signing secrets are encrypted with it; the development key is public)');
    if (config.BILLING_MODE === 'sandbox') missing.push('BILLING_MODE=live (sandbox billing credits wallets without real payment)');
    if (config.MCP_ISSUER && !config.MCP_RESOURCE_URL) missing.push('MCP_RESOURCE_URL (the public URL of /mcp)');
    if (config.MCP_ISSUER && !config.MCP_EXCHANGE_CLIENT_SECRET) missing.push('MCP_EXCHANGE_CLIENT_SECRET');
    if (config.MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK)
      missing.push('MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK unset (loopback metadata documents are for development)');
    // In clear text, keys and metadata could be swapped by anyone on the path, and tokens and sign-ins read.
    for (const name of ['AUTH_JWKS_URL', 'MCP_ISSUER', 'MCP_RESOURCE_URL', 'CONSOLE_ISSUER', 'PUBLIC_BASE_URL'] as const) {
      if (config[name] && !config[name].startsWith('https:')) missing.push(`${name} must be an https URL`);
    }
    // `true` trusts every X-Forwarded-For entry, so each client would pick its own rate-limit key.
    if (config.BROWSER_ALLOW_LOOPBACK) {
      missing.push('BROWSER_ALLOW_LOOPBACK=true is for tests: it lets browser jobs open loopback addresses');
    }
    if (config.TRUST_PROXY === true) {
      missing.push(
        'TRUST_PROXY=true trusts any client-sent address; set the number of proxies in front (e.g. 1) or their subnets (e.g. 10.0.0.0/8)',
      );
    }
    for (const seller of config.ADCP_SELLERS) {
      if (!seller.agentUrl.startsWith('https:')) missing.push(`ADCP_SELLERS: seller ${seller.key}'s agentUrl must be an https URL`);
      if (seller.webhookJwksUrl && !seller.webhookJwksUrl.startsWith('https:'))
        missing.push(`ADCP_SELLERS: seller ${seller.key}'s webhookJwksUrl must be an https URL`);
      if (seller.webhookRevocationUrl && !seller.webhookRevocationUrl.startsWith('https:'))
        missing.push(`ADCP_SELLERS: seller ${seller.key}'s webhookRevocationUrl must be an https URL`);
    }
    if (missing.length) {
      throw new ConfigError(`Invalid configuration for NODE_ENV=production:\n${missing.map((m) => `  ${m}`).join('\n')}`);
    }
  }
  if (!config.AUTH_JWKS_URL && !isLoopback(config.HOST) && !config.DEV_AUTH_ALLOW_REMOTE) {
    throw new ConfigError(
      `Invalid configuration:\n  HOST=${config.HOST} with the development issuer (no AUTH_JWKS_URL): anyone who can reach ` +
        'the port could sign in as any user of any workspace, with any permission, and get API tokens. Keep HOST on loopback ' +
        '(127.0.0.1, the default without AUTH_JWKS_URL), configure AUTH_JWKS_URL and AUTH_ISSUER, or set ' +
        'DEV_AUTH_ALLOW_REMOTE=true if every machine that can reach this one is trusted.',
    );
  }
  if (config.BILLING_MODE === 'live' && (!config.STRIPE_SECRET_KEY || !config.STRIPE_WEBHOOK_SECRET)) {
    throw new ConfigError('Invalid configuration:\n  STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are required when BILLING_MODE=live');
  }
  if (config.BILLING_TOPUP_MIN_MINOR > config.BILLING_TOPUP_MAX_MINOR) {
    throw new ConfigError('Invalid configuration:\n  BILLING_TOPUP_MIN_MINOR must not exceed BILLING_TOPUP_MAX_MINOR');
  }
  return config;
}

/** The agent endpoint's exact URL, the audience of its tokens. */
/** Where people open the console: the public base URL, or localhost in development. */
export const consoleBaseOf = (config: Config) => (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/$/, '');
export const mcpResourceUrlOf = (config: Config) => config.MCP_RESOURCE_URL ?? `http://localhost:${config.PORT}/mcp`;

/** Where creative evidence and other assets are stored. */
export const assetDirOf = (config: Config) => path.resolve(config.ASSET_DIR ?? path.join(config.DATA_DIR, 'assets'));
