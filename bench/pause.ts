import type { Knex } from 'knex';
import { callApi } from './campaigns';
import { bookingWatcher } from './booking-watcher';
import type { ServiceProcess } from './service-process';

/**
 * Pauses the campaigns given (their seven lines confirmed), 10 at a time, each timed from its
 * POST until every line is stopped: the in-flight control's round trip through the suppliers,
 * beside the launch it follows.
 */
export async function pauses(service: ServiceProcess, token: string, db: Knex, campaigns: string[]): Promise<PauseRun> {
  const settled: number[] = [];
  const accepted: number[] = [];
  const bookings: string[] = [];
  const watcher = bookingWatcher(db, 'stopped');
  const queue = [...campaigns];
  try {
    await Promise.race([
      Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let id = queue.shift(); id; id = queue.shift()) {
            const t0 = performance.now();
            const { booking } = await callApi(service.url, token, `/api/v1/campaigns/${id}/pause`, 'POST');
            accepted.push(performance.now() - t0);
            bookings.push(booking.id as string);
            await watcher.until(booking.id as string);
            settled.push(performance.now() - t0);
          }
        }),
      ),
      service.died,
    ]);
  } finally {
    await watcher.stop();
  }
  return { settled, accepted, phases: await phasesOf(db, bookings) };
}

export interface PauseRun {
  settled: number[];
  /** Each pause's request alone, to its 202. */
  accepted: number[];
  /** Where each pause's time went, per booking, in ms on the database's clock (p50 and p95). */
  phases: Record<'requestToFirstStart' | 'firstToLastStart' | 'lastStartToStopped', { p50: number; p95: number }>;
}

/**
 * The phases of each pause, from its lines' events (each stamped with its transaction's start):
 * the request's commit and the queue to the first line's start, the spread of the seven starts
 * (jobs waiting on each other or on a worker slot), and the last start to the last line stopped
 * (the supplier call and the answer's write).
 */
async function phasesOf(db: Knex, bookings: string[]): Promise<PauseRun['phases']> {
  const { rows } = await db.raw<{ rows: Array<{ a: number; b: number; c: number }> }>(
    `select extract(epoch from min(created_at) filter (where action = 'line.pause-started') - min(created_at) filter (where action = 'line.pause-requested')) * 1000 as a,
            extract(epoch from max(created_at) filter (where action = 'line.pause-started') - min(created_at) filter (where action = 'line.pause-started')) * 1000 as b,
            extract(epoch from max(created_at) filter (where action = 'line.paused') - max(created_at) filter (where action = 'line.pause-started')) * 1000 as c
       from booking_events where booking_id = any(?::uuid[]) group by booking_id`,
    [bookings],
  );
  const p = (xs: number[], q: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
  const of = (xs: number[]) => ({ p50: p(xs, 0.5), p95: p(xs, 0.95) });
  return {
    requestToFirstStart: of(rows.map((r) => Number(r.a))),
    firstToLastStart: of(rows.map((r) => Number(r.b))),
    lastStartToStopped: of(rows.map((r) => Number(r.c))),
  };
}
