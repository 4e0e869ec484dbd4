import { createHash } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { types } from 'pg';

// bigint (int8) money columns come back as strings by default; we convert them with a
// safe-integer check in the stores instead of silently losing precision here.
types.setTypeParser(types.builtins.INT8, (v) => v);
// Calendar days stay `YYYY-MM-DD` text: a Date at local midnight would shift a day in other time zones.
types.setTypeParser(types.builtins.DATE, (v) => v);

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
  /** Behind a transaction-mode pooler the timeouts are the role's defaults, not connection settings. */
  pooler?: 'none' | 'transaction';
}

/** The database bounds that configuration sets (DB_*). */
export const dbOptionsOf = (config: {
  DB_STATEMENT_TIMEOUT_MS: number;
  DB_LOCK_TIMEOUT_MS: number;
  DB_ACQUIRE_TIMEOUT_MS: number;
  DB_POOLER: 'none' | 'transaction';
}): DbOptions => ({
  statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
  lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS,
  acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS,
  pooler: config.DB_POOLER,
});

export function createDb(connectionString: string, opts: DbOptions = {}, logger?: DbLog): Knex {
  // knex would print pool errors with console.log; they belong in our structured log (or nowhere, in tests).
  const log = (level: 'warn' | 'debug') => (message: unknown) => logger?.[level]({ component: 'knex' }, String(message));
  // A transaction-mode pooler refuses (or would drop) startup parameters it does not track.
  const asStartupParameters = opts.pooler !== 'transaction';
  const statementTimeout = asStartupParameters ? (opts.statementTimeoutMs ?? 30_000) : 0;
  const lockTimeout = asStartupParameters ? (opts.lockTimeoutMs ?? 5_000) : 0;
  const db = knex({
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
  if (!asStartupParameters) behindPooler.add(db.client.config);
  return db;
}

// Configurations of databases reached through a transaction-mode pooler (transactions share their database's).
const behindPooler = new WeakSet<object>();
const statementNames = new Map<string, string>();

/**
 * Query options that make a hot statement a named prepared statement, so each connection has
 * PostgreSQL parse and plan it once rather than on every call. None behind a transaction-mode
 * pooler, whose server connections do not stay with the client. For statements whose text
 * takes only a few shapes: each shape is named once. Run them through `rawPrepared`, which
 * survives a migration changing their columns.
 */
export function prepared(q: Knex, sql: string): { name?: string } {
  if (behindPooler.has(q.client.config)) return {};
  let name = statementNames.get(sql);
  if (!name && statementNames.size < 500) {
    name = `fd_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name ? { name } : {};
}

/**
 * PostgreSQL refuses to run a prepared statement whose result columns changed since a connection
 * prepared it (a migration added a column to a table it reads with `*`). Message as the server
 * words it (knex puts the statement in front), under SQLSTATE 0A000.
 */
export const isStalePreparedStatement = (err: unknown): boolean =>
  (err as { code?: unknown } | null)?.code === '0A000' &&
  /(?:^|- )cached plan must not change result type$/.test((err as Error).message ?? '');

/** The statement's next name: every connection prepares it afresh, with the columns as they are now. */
function renamePrepared(sql: string): void {
  const name = statementNames.get(sql);
  if (!name) return;
  const generation = Number(/_g(\d+)$/.exec(name)?.[1] ?? 0) + 1;
  statementNames.set(sql, `${name.replace(/_g\d+$/, '')}_g${generation}`);
}

/**
 * Runs `sql` as a named prepared statement (see `prepared`) and returns its rows. When a migration
 * changed its columns under a running process, the statement is renamed so that every connection
 * prepares it again, and it is run again at once; inside a transaction, which PostgreSQL has then
 * aborted, the error stands (a transient 503: the same request succeeds when retried).
 */
export async function rawPrepared<T>(q: Knex, sql: string, bindings: readonly Knex.Value[]): Promise<T[]> {
  const run = async () => (await q.raw<{ rows: T[] }>(sql, bindings).options(prepared(q, sql))).rows;
  try {
    return await run();
  } catch (err) {
    if (!isStalePreparedStatement(err)) throw err;
    renamePrepared(sql);
    if ((q as Knex.Transaction).isTransaction) throw err;
    return run();
  }
}

/**
 * The rows of a built query, sent as a named prepared statement (see `rawPrepared`): for a hot
 * read whose plan costs PostgreSQL more than running it.
 */
export async function rowsPrepared<T>(q: Knex, query: Knex.QueryBuilder): Promise<T[]> {
  const { sql, bindings } = query.toSQL();
  return rawPrepared<T>(q, sql, bindings as readonly Knex.Value[]);
}

/** The first row of a built query, as a named prepared statement (see `rowsPrepared`). */
export const firstPrepared = async <T>(q: Knex, query: Knex.QueryBuilder): Promise<T | undefined> =>
  (await rowsPrepared<T>(q, query.limit(1)))[0];

export type { Knex };

/** A piece of SQL with its `?` bindings, to run alone or embed in a larger statement. */
export interface SqlPart {
  sql: string;
  bindings: readonly Knex.Value[];
}

/** A setting in milliseconds as PostgreSQL shows it ('0', '30s', '5000ms', '1min'). */
function showMs(value: string): number {
  const m = /^(\d+)\s*(ms|s|min|h|d)?$/.exec(value.trim());
  if (!m) return Number.NaN;
  const unit = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 'ms']!;
  return Number(m[1]) * unit;
}

/**
 * Behind a transaction-mode pooler, the timeouts come from the role's defaults. Says which
 * ones a server connection lacks, with the statement that sets them; empty when all hold.
 */
export async function missingRoleTimeouts(db: Knex, opts: DbOptions): Promise<string[]> {
  const wanted: Array<[setting: string, ms: number]> = [
    ['statement_timeout', opts.statementTimeoutMs ?? 30_000],
    ['lock_timeout', opts.lockTimeoutMs ?? 5_000],
  ];
  const missing: string[] = [];
  for (const [setting, ms] of wanted) {
    if (ms <= 0) continue;
    const { rows } = (await db.raw(`select current_setting(?) as value, current_user as role`, [setting])) as {
      rows: Array<{ value: string; role: string }>;
    };
    const actual = showMs(rows[0]!.value);
    if (!(actual > 0 && actual <= ms)) missing.push(`ALTER ROLE "${rows[0]!.role}" SET ${setting} = '${ms}ms'`);
  }
  return missing;
}

/** Money is integer minor units; a value outside the safe integer range is a bug, not a rounding. */
export function toMinor(value: string | number | null | undefined): number {
  const n = typeof value === 'string' ? Number(value) : (value ?? 0);
  if (!Number.isSafeInteger(n)) throw new Error(`money value out of safe integer range: ${String(value)}`);
  return n;
}
