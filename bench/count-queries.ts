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

// One profile per measured stretch (`profile-start` names it: the launches, then the pauses).
let profiler: ReturnType<typeof cpuProfiler> | undefined;
async function profile(kind: 'profile-start' | 'profile-stop', name = 'launch-measured'): Promise<void> {
  if (kind === 'profile-start') await (profiler = cpuProfiler(name)).start();
  else await profiler?.stop();
  process.send?.({ kind });
}

process.on('message', (m: { kind?: string; name?: string }) => {
  if (m?.kind === 'db-counts') process.send?.(counts);
  if (m?.kind === 'profile-start' || m?.kind === 'profile-stop') void profile(m.kind, m.name);
});
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
