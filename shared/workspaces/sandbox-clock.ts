import type { Knex } from 'knex';

const DAY_MS = 86_400_000;

/**
 * A workspace's sandbox test clock: how many days its sandbox suppliers' "now" runs ahead of
 * real time (like a payment provider's test clocks). Live bookings always use real time.
 */
export interface SandboxClock {
  offsetDays: number;
  now: Date;
}

export async function readOffsetDays(db: Knex, advertiserId: string): Promise<number> {
  const row = await db('sandbox_clocks').where({ advertiser_id: advertiserId }).first('offset_days');
  return row ? Number(row.offset_days) : 0;
}

/** The moment `real` as seen by a booking in `mode` whose workspace's clock is `offsetDays` ahead. */
export const clockedNow = (mode: 'sandbox' | 'live', offsetDays: number, real = new Date()): Date =>
  mode === 'sandbox' && offsetDays > 0 ? new Date(real.getTime() + offsetDays * DAY_MS) : real;

export async function sandboxClock(db: Knex, advertiserId: string, real = new Date()): Promise<SandboxClock> {
  const offsetDays = await readOffsetDays(db, advertiserId);
  return { offsetDays, now: clockedNow('sandbox', offsetDays, real) };
}

/** "Now" for a booking of this workspace in this mode. */
export async function nowFor(db: Knex, advertiserId: string, mode: 'sandbox' | 'live', real = new Date()): Promise<Date> {
  return mode === 'live' ? real : (await sandboxClock(db, advertiserId, real)).now;
}

/** Moves the workspace's sandbox clock `days` forward; returns the clock after it. */
export async function advanceSandboxClock(db: Knex, advertiserId: string, days: number, actorId: string): Promise<SandboxClock> {
  const [row] = await db('sandbox_clocks')
    .insert({ advertiser_id: advertiserId, offset_days: days, advanced_by: actorId })
    .onConflict('advertiser_id')
    .merge({
      offset_days: db.raw('sandbox_clocks.offset_days + ?', [days]),
      advanced_by: actorId,
      updated_at: db.fn.now(),
    })
    .returning('offset_days');
  const offsetDays = Number(row.offset_days);
  return { offsetDays, now: clockedNow('sandbox', offsetDays) };
}
