/**
 * Preloaded into `npm start`'s process by the launch bench (`--import`), so the service's
 * database round trips are counted where they are made, product code unchanged: every query
 * pg sends, and the transactions among them (BEGIN). Answers `{ kind: 'db-counts' }` from the
 * bench over the IPC channel, and stops the service if the bench goes away. With
 * BENCH_CPU_PROF_DIR set, `profile-start` and `profile-stop` profile the service's CPU over the
 * measured launches alone (not its start, nor the setting up), written to that folder.
 */
import { Client } from 'pg';
import { cpuProfiler } from './support';

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

const profiler = cpuProfiler('launch-measured');
async function profile(kind: 'profile-start' | 'profile-stop'): Promise<void> {
  await (kind === 'profile-start' ? profiler.start() : profiler.stop());
  process.send?.({ kind });
}

process.on('message', (m: { kind?: string }) => {
  if (m?.kind === 'db-counts') process.send?.(counts);
  if (m?.kind === 'profile-start' || m?.kind === 'profile-stop') void profile(m.kind);
});
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
