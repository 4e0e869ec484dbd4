import { Problem, badRequest, unavailable } from '../errors';
import { isStalePreparedStatement } from './knex';

/**
 * The one place that decides what a database failure means to a client. An outage, a full
 * pool or a server-side timeout is transient (503 with retry-after), never a 500: the
 * statement was refused or rolled back, so retrying it later is safe.
 */

// SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
// query_canceled (statement_timeout), lock_not_available (lock_timeout); a serialization failure or deadlock was rolled back too.
const TIMEOUT_CODES = new Set(['57014', '55P03', '40001', '40P01']);
const OVERLOAD_CODES = new Set(['53300', '53400']); // too_many_connections, configuration_limit_exceeded
const DOWN_CODES = new Set(['57P01', '57P02', '57P03']); // admin_shutdown, crash_shutdown, cannot_connect_now
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// node-postgres reports a dropped or timed-out connection with a plain Error and no code;
// knex puts the statement in front ("select … - Connection terminated unexpectedly").
const PG_CONNECTION_MESSAGE = /(?:^|- )(?:Connection terminated|timeout expired|Connection ended unexpectedly)/;

export type DatabaseOutage = 'timeout' | 'busy' | 'unreachable';

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Which kind of transient database failure `err` is, or null when it is not one. */
export function databaseOutageOf(err: unknown): DatabaseOutage | null {
  if (!err || typeof err !== 'object') return null;
  const code = codeOf(err);
  if (code && TIMEOUT_CODES.has(code)) return 'timeout';
  if (code && (OVERLOAD_CODES.has(code) || DOWN_CODES.has(code))) return 'busy';
  if (code && (code.startsWith('08') || NETWORK_CODES.has(code))) return 'unreachable';
  // knex: no pool connection became free within the acquire timeout.
  if ((err as Error).name === 'KnexTimeoutError') return 'busy';
  // A prepared statement whose columns a migration changed: prepared again on the next try.
  if (isStalePreparedStatement(err)) return 'busy';
  if (err instanceof AggregateError) return err.errors.some((e) => databaseOutageOf(e) === 'unreachable') ? 'unreachable' : null;
  // Only for errors without a code: a server error's message may quote what a client sent.
  if (err instanceof Error && !code && PG_CONNECTION_MESSAGE.test(err.message)) return 'unreachable';
  return null;
}

const RETRY_AFTER_SECONDS: Record<DatabaseOutage, number> = { timeout: 1, busy: 2, unreachable: 5 };
const DETAIL: Record<DatabaseOutage, string> = {
  timeout: 'The database did not finish in time (a lock or statement timeout). Nothing was changed; retry shortly.',
  busy: 'The database is busy. Nothing was changed; retry shortly.',
  unreachable: 'The database is unreachable. Retry shortly.',
};

/** Text PostgreSQL cannot store (a NUL character, say) is the client's mistake, not ours. */
export const invalidText = () =>
  badRequest('A text field contains a character that cannot be stored (such as \\u0000).', undefined, 'invalid_text');

/** A problem for a database failure we understand, or null for anything else (a bug: 500). */
export function databaseProblem(err: unknown): Problem | null {
  const code = codeOf(err);
  if (code === '22021' || code === '22P05') return invalidText();
  const outage = databaseOutageOf(err);
  return outage ? unavailable(DETAIL[outage], 'database_unavailable', RETRY_AFTER_SECONDS[outage]) : null;
}
