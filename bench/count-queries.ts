/**
 * Preloaded into `npm start`'s process by the launch bench (`--import`), so the service's
 * database round trips are counted where they are made, product code unchanged: every query
 * pg sends, and the transactions among them (BEGIN). Answers `{ kind: 'db-counts' }` from the
 * bench over the IPC channel, and stops the service if the bench goes away.
 */
import { Client } from 'pg';

export interface DbCounts {
  kind: 'db-counts';
  queries: number;
  transactions: number;
}

const counts: DbCounts = { kind: 'db-counts', queries: 0, transactions: 0 };
const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const query = proto.query;
proto.query = function (this: Client, ...args: unknown[]) {
  counts.queries++;
  const first = args[0];
  const text = typeof first === 'string' ? first : (first as { text?: unknown } | undefined)?.text;
  if (typeof text === 'string' && /^\s*begin\b/i.test(text)) counts.transactions++;
  return query.apply(this, args);
};

process.on('message', (m: { kind?: string }) => {
  if (m?.kind === 'db-counts') process.send?.(counts);
});
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
