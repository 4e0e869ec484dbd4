import type { Knex } from 'knex';
import { findAdapter } from '../adapters/catalogue';
import { SYSTEM } from '../auth/actor';
import { alreadyDone, controlRefusal, requestControl } from '../bookings/lines/control';
import { lockLine } from '../bookings/lines/store';
import { dateOnly } from '../dates';
import { toMinor } from '../db/knex';
import type { JobMessage } from '../queues/jobs';
import { clockedNow, readOffsetDays } from '../workspaces/sandbox-clock';

export interface CapGuardResult {
  paused: string[];
  resumed: string[];
  queued: JobMessage[];
}

interface CappedLine {
  id: string;
  booking_id: string;
  campaign_id: string;
  advertiser_id: string;
  adapter_key: string;
  execution_mode: 'sandbox' | 'live';
  status: string;
  line_cap: string | null;
  campaign_cap: string | null;
  cap_paused_on: string | null;
  start_date: string;
  end_date: string;
}

/**
 * Enforces daily caps through the engine, for suppliers that cannot cap natively: a running line
 * whose day's delivered spend (as reported so far that day, on the line's clock, UTC) reached its
 * cap, or whose campaign's lines together reached the campaign's cap, is
 * paused through the line-control request (`requestControl`, the same operation a person's pause
 * is), and marked with the day; from the next day's start, a line the cap paused is resumed the
 * same way. A line a person resumed on the day the cap paused it is not paused again that day; a
 * line a person paused for another reason, or stopped, is never resumed by the cap. Each line is
 * decided under its lock, so guards running at once ask for one operation. A line on a supplier
 * that caps natively (`capsNatively`) is held to its own cap by the supplier, so its own cap never
 * pauses it; a campaign's cap spans lines (and suppliers), so the engine enforces it for every line.
 */
export async function enforceDailyCaps(db: Knex, opts: { advertiserId?: string; real?: Date } = {}): Promise<CapGuardResult> {
  const real = opts.real ?? new Date();
  const result: CapGuardResult = { paused: [], resumed: [], queued: [] };
  const rows = (await db('booking_lines as l')
    .join('bookings as b', 'b.id', 'l.booking_id')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .whereNull('b.closed_out_at')
    .where((w) => w.whereNotNull('l.daily_cap_minor').orWhereNotNull('c.daily_cap_minor').orWhereNotNull('l.cap_paused_on'))
    .whereIn('l.status', ['confirmed', 'stopped'])
    .modify((q) => (opts.advertiserId ? q.where('l.advertiser_id', opts.advertiserId) : q))
    .orderBy('l.id')
    .select(
      'l.id',
      'l.booking_id',
      'b.campaign_id',
      'l.advertiser_id',
      'l.adapter_key',
      'l.execution_mode',
      'l.status',
      'l.daily_cap_minor as line_cap',
      'c.daily_cap_minor as campaign_cap',
      db.raw("to_char(l.cap_paused_on, 'YYYY-MM-DD') as cap_paused_on"),
      db.raw("to_char(c.start_date, 'YYYY-MM-DD') as start_date"),
      db.raw("to_char(c.end_date, 'YYYY-MM-DD') as end_date"),
    )) as CappedLine[];
  const offsets = new Map<string, number>();
  for (const r of rows) if (!offsets.has(r.advertiser_id)) offsets.set(r.advertiser_id, await readOffsetDays(db, r.advertiser_id));
  const todayOf = (r: CappedLine) => dateOnly(clockedNow(r.execution_mode, offsets.get(r.advertiser_id) ?? 0, real));

  for (const r of rows) {
    const today = todayOf(r);
    if (r.cap_paused_on !== null && r.cap_paused_on < today) {
      if (await resumeNextDay(db, r, result)) result.resumed.push(r.id);
      continue;
    }
    if (r.status !== 'confirmed' || r.cap_paused_on === today || today < r.start_date || today > r.end_date) continue;
    const reached = await capReached(db, r, today);
    if (reached && (await pauseAtCap(db, r, today, reached, result))) result.paused.push(r.id);
  }
  return result;
}

/** The cap the line's day reached (its own, or its campaign's), with the day's spend; null when none. */
async function capReached(
  db: Knex,
  r: CappedLine,
  today: string,
): Promise<{ capMinor: number; spentMinor: number; scope: 'line' | 'campaign' } | null> {
  // A supplier that caps natively holds the line to its own cap: the engine does not pause for it.
  if (r.line_cap !== null && findAdapter(r.adapter_key)?.capsNatively !== true) {
    const [row] = await db('delivery_days').where({ line_id: r.id, day: today }).select('spend_minor');
    const spent = row ? toMinor(row.spend_minor) : 0;
    if (spent >= toMinor(r.line_cap)) return { capMinor: toMinor(r.line_cap), spentMinor: spent, scope: 'line' };
  }
  if (r.campaign_cap !== null) {
    const [row] = await db('delivery_days as d')
      .join('bookings as b', 'b.id', 'd.booking_id')
      .where({ 'b.campaign_id': r.campaign_id, 'd.day': today })
      .sum({ spent: 'd.spend_minor' });
    const spent = toMinor(row?.spent ?? 0);
    if (spent >= toMinor(r.campaign_cap)) return { capMinor: toMinor(r.campaign_cap), spentMinor: spent, scope: 'campaign' };
  }
  return null;
}

async function pauseAtCap(
  db: Knex,
  r: CappedLine,
  today: string,
  reached: { capMinor: number; spentMinor: number; scope: 'line' | 'campaign' },
  result: CapGuardResult,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, r.booking_id, r.id);
    if (!locked) return false;
    const line = locked.line;
    const pausedOn = line.cap_paused_on === null ? null : dateOnly(line.cap_paused_on);
    // Decided again under the lock: another guard may have been first, or a person may have acted.
    if (pausedOn === today || alreadyDone(line, 'pause') || controlRefusal(line, 'pause') !== null) return false;
    const note = `Daily cap reached: ${reached.spentMinor} of the ${reached.scope}'s ${reached.capMinor} spent on ${today} (UTC).`;
    const { queued } = await requestControl(trx, locked, 'pause', SYSTEM, { note });
    await trx('booking_lines').where({ id: r.id }).update({ cap_paused_on: today });
    result.queued.push(...queued);
    return true;
  });
}

async function resumeNextDay(db: Knex, r: CappedLine, result: CapGuardResult): Promise<boolean> {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, r.booking_id, r.id);
    if (!locked) return false;
    const line = locked.line;
    if (line.cap_paused_on === null) return false;
    // Still paused by the cap's own pause: resume it. A line a person resumed, stopped or ended is left as it is.
    const pausedByCap = line.status === 'stopped' && line.stop?.kind === 'pause' && line.stop.by === SYSTEM.actorId;
    if (pausedByCap && line.operation_id === null && controlRefusal(line, 'resume') === null) {
      const { queued } = await requestControl(trx, locked, 'resume', SYSTEM, {
        note: 'A new day: the daily cap resumes the line it paused.',
      });
      result.queued.push(...queued);
      await trx('booking_lines').where({ id: r.id }).update({ cap_paused_on: null });
      return true;
    }
    // Its pause still in hand: decided at the next guard.
    if (line.operation_id !== null) return false;
    await trx('booking_lines').where({ id: r.id }).update({ cap_paused_on: null });
    return false;
  });
}
