import knex, { type Knex } from 'knex';
import { types } from 'pg';

// bigint (int8) money columns come back as strings by default; we convert them with a
// safe-integer check in the stores instead of silently losing precision here.
types.setTypeParser(types.builtins.INT8, (v) => v);

interface DbLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export function createDb(connectionString: string, pool: { min?: number; max?: number } = {}, logger?: DbLog): Knex {
  // knex would print pool errors with console.log; they belong in our structured log (or nowhere, in tests).
  const log = (level: 'warn' | 'debug') => (message: unknown) => logger?.[level]({ component: 'knex' }, String(message));
  return knex({
    log: { warn: log('warn'), error: log('warn'), deprecate: log('debug'), debug: log('debug') },
    client: 'pg',
    connection: { connectionString, connectionTimeoutMillis: 5000 },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    acquireConnectionTimeout: 10_000,
  });
}

export type { Knex };

/** Money is integer minor units; a value outside the safe integer range is a bug, not a rounding. */
export function toMinor(value: string | number | null | undefined): number {
  const n = typeof value === 'string' ? Number(value) : (value ?? 0);
  if (!Number.isSafeInteger(n)) throw new Error(`money value out of safe integer range: ${String(value)}`);
  return n;
}
