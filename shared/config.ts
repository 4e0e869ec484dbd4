import path from 'node:path';
import { z } from 'zod';

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

export const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
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
  /** On SIGTERM, how long in-flight requests may run before their connections are closed. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(9_000).default(5_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Comma-separated queue names this worker consumes; empty means all. */
  WORKER_QUEUES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[a-z][a-z0-9.-]*$/, 'queue names are lower-case, e.g. supplier.sandbox-ctv'))),
  EXECUTION_MODE_DEFAULT: z.enum(['sandbox', 'live']).default('sandbox'),
  BILLING_MODE: z.enum(['sandbox', 'live']).default('sandbox'),
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
  /** How long a supplier call may take before its outcome counts as unknown. */
  SUPPLIER_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** BullMQ job lock and stalled-job check: how soon a crashed worker's job is noticed. */
  WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(500).default(30_000),
  WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  OUTBOX_RELAY_INTERVAL_MS: z.coerce.number().int().min(50).default(1000),
  /** How long the sandbox "slow" trigger takes. */
  SANDBOX_SLOW_MS: z.coerce.number().int().min(0).default(3000),
  /** How long the API waits for a persona-extract worker before answering 503. */
  PERSONA_EXTRACT_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** When a booking's suppliers are due to have confirmed it. */
  CONFIRMATION_SLA_HOURS: z.coerce.number().int().min(1).default(48),
});

export type Config = z.infer<typeof ConfigSchema>;

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
    if (!config.REDIS_URL) missing.push('REDIS_URL');
    // Keys fetched in clear text could be swapped by anyone on the path, and every token with them.
    if (config.AUTH_JWKS_URL && !config.AUTH_JWKS_URL.startsWith('https:')) missing.push('AUTH_JWKS_URL must be an https URL');
    if (missing.length) {
      throw new ConfigError(`Invalid configuration for NODE_ENV=production:\n${missing.map((m) => `  ${m}`).join('\n')}`);
    }
  }
  return config;
}

/** Where creative evidence and other assets are stored. */
export const assetDirOf = (config: Config) => path.resolve(config.ASSET_DIR ?? path.join(config.DATA_DIR, 'assets'));
