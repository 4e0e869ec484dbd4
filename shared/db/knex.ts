import knex, { type Knex } from 'knex';
import { types } from 'pg';

// bigint (int8) money columns come back as strings by default; we convert them with a
// safe-integer check in the stores instead of silently losing precision here.
types.setTypeParser(types.builtins.INT8, (v) => v);

interface DbLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface DbOptions {
  min?: number;
  max?: number;
  /** Server-side bound on one statement (0 turns it off). */
  statementTimeoutMs?: number;
  /** Server-side bound on waiting for a row or table lock (0 turns it off). */
  lockTimeoutMs?: number;
  /** How long a query waits for a free pool connection before it fails. */
  acquireTimeoutMs?: number;
}

/** The database bounds that configuration sets (DB_*). */
export const dbOptionsOf = (config: { DB_STATEMENT_TIMEOUT_MS: number; DB_LOCK_TIMEOUT_MS: number; DB_ACQUIRE_TIMEOUT_MS: number }) => ({
  statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
  lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS,
  acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS,
});

export function createDb(connectionString: string, opts: DbOptions = {}, logger?: DbLog): Knex {
  // knex would print pool errors with console.log; they belong in our structured log (or nowhere, in tests).
  const log = (level: 'warn' | 'debug') => (message: unknown) => logger?.[level]({ component: 'knex' }, String(message));
  const statementTimeout = opts.statementTimeoutMs ?? 30_000;
  const lockTimeout = opts.lockTimeoutMs ?? 5_000;
  return knex({
    log: { warn: log('warn'), error: log('warn'), deprecate: log('debug'), debug: log('debug') },
    client: 'pg',
    connection: {
      connectionString,
      connectionTimeoutMillis: 5000,
      // pg sends these as startup parameters of every connection, so they hold on each pooled
      // connection without a per-session SET that a transaction-mode pooler could drop.
      ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
      ...(lockTimeout > 0 ? { lock_timeout: lockTimeout } : {}),
    },
    pool: { min: opts.min ?? 0, max: opts.max ?? 10 },
    acquireConnectionTimeout: opts.acquireTimeoutMs ?? 10_000,
  });
}

export type { Knex };

/** Money is integer minor units; a value outside the safe integer range is a bug, not a rounding. */
export function toMinor(value: string | number | null | undefined): number {
  const n = typeof value === 'string' ? Number(value) : (value ?? 0);
  if (!Number.isSafeInteger(n)) throw new Error(`money value out of safe integer range: ${String(value)}`);
  return n;
}
