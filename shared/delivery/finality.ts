import type { Knex } from 'knex';
import { findAdapter } from '../adapters/catalogue';
import type { Actor } from '../auth/actor';
import { appendEvent } from '../bookings/booking-events';
import { addDays, dateOnly } from '../dates';
import { badRequest, conflict, notFound } from '../errors';
import { clockedNow, readOffsetDays } from '../workspaces/sandbox-clock';

/**
 * When delivery becomes final (docs/billing.md, Reconciliation). A day is final when its seller
 * says so (a report's `final`, marked as it is stored), when the seller's finalization window has
 * passed since the day ended (on the line's clock: a sandbox workspace's test clock), or, for
 * workflow lines, when staff mark the month final. A line's month is closed once every day of its
 * flight in that month is final; an invoice for it may then be matched.
 */

/** The line's clock, in SQL: real time, or a sandbox workspace's test clock. */
const CLOCK = `((?::timestamptz at time zone 'utc') + make_interval(days => case when l.execution_mode = 'sandbox'
  then coalesce(sc.offset_days, 0) else 0 end))`;

const WINDOW_FINAL = `
update delivery_days d set final_at = now(), final_source = 'window'
  from booking_lines l left join sandbox_clocks sc on sc.advertiser_id = l.advertiser_id
 where d.line_id = l.id and d.final_at is null and l.adapter_key = ? and (?::text is null or l.advertiser_id = ?)
   and (d.day + 1)::timestamp + make_interval(hours => ?) <= ${CLOCK}`;

/** A line's month as it stands (`m` has id, first_day, last_day): its spend before, its flight days' figures, how many are final. */
const MONTH_FIGURES = (m: string) => `
  select coalesce(sum(d.spend_minor) filter (where d.day < ${m}.first_day), 0) as before_minor,
         coalesce(sum(d.spend_minor) filter (where d.day >= ${m}.first_day), 0) as month_minor,
         coalesce(sum(d.impressions) filter (where d.day >= ${m}.first_day), 0) as month_impressions,
         count(*) filter (where d.day >= ${m}.first_day and d.final_at is not null) as final_days
    from delivery_days d where d.line_id = ${m}.id and d.day <= ${m}.last_day`;

const CLOSE_MONTHS = `
with ran as (
  select l.id, l.advertiser_id, l.booking_id, l.adapter_key, l.budget_minor, c.start_date, c.end_date, ${CLOCK} as now
    from booking_lines l
    join bookings b on b.id = l.booking_id
    join campaigns c on c.id = b.campaign_id
    left join sandbox_clocks sc on sc.advertiser_id = l.advertiser_id
   where l.adapter_key = ? and (?::text is null or l.advertiser_id = ?)
     and (l.confirmed_at is not null or l.status = 'confirmed')
),
months as (
  select r.*, to_char(m, 'YYYY-MM') as period, greatest(r.start_date, m::date) as first_day,
         least(r.end_date, (m + interval '1 month' - interval '1 day')::date) as last_day
    from ran r, generate_series(date_trunc('month', r.start_date), date_trunc('month', r.end_date), interval '1 month') m
),
due as (
  select m.*, (m.last_day + 1)::timestamp + make_interval(hours => ?) <= m.now as by_window
    from months m
   where not exists (select 1 from delivery_month_closes x where x.line_id = m.id and x.period = m.period)
)
insert into delivery_month_closes (line_id, period, advertiser_id, booking_id, adapter_key, last_day,
  final_minor, final_impressions, billable_minor, billable_before_minor, closed_by, actor_id)
select due.id, period, advertiser_id, booking_id, adapter_key, last_day, f.month_minor, f.month_impressions,
       least(f.before_minor + f.month_minor, due.budget_minor) - least(f.before_minor, due.budget_minor),
       least(f.before_minor, due.budget_minor), case when by_window then 'window' else 'seller' end, 'flightdeck'
  from due
  cross join lateral (${MONTH_FIGURES('due')}) f
 where by_window or f.final_days = (due.last_day - due.first_day + 1)
on conflict do nothing`;

/**
 * One seller's days whose window has passed become final, then its lines' months whose days are
 * all final close. Workflow sellers' figures become final only when staff say so. Safe to run any
 * number of times; `advertiserId` narrows it to one workspace (a moved sandbox clock).
 */
export async function settleFinality(
  db: Knex,
  adapterKey: string,
  finalizationHours: number,
  opts: { advertiserId?: string; real?: Date } = {},
): Promise<{ finalDays: number; closedMonths: number }> {
  if (findAdapter(adapterKey)?.kind === 'workflow') return { finalDays: 0, closedMonths: 0 };
  const real = (opts.real ?? new Date()).toISOString();
  const who = opts.advertiserId ?? null;
  const days = await db.raw(WINDOW_FINAL, [adapterKey, who, who, finalizationHours, real]);
  const months = await db.raw(CLOSE_MONTHS, [real, adapterKey, who, who, finalizationHours]);
  return { finalDays: days.rowCount ?? 0, closedMonths: months.rowCount ?? 0 };
}

/** Every seller with lines, each on its own terms: the hourly housekeeping pass. */
export async function sweepFinality(
  db: Knex,
  termsOf: (adapterKey: string) => { finalizationHours: number },
  real = new Date(),
): Promise<{ finalDays: number; closedMonths: number }> {
  const keys = await db('booking_lines').distinct('adapter_key');
  const total = { finalDays: 0, closedMonths: 0 };
  for (const { adapter_key: key } of keys as Array<{ adapter_key: string }>) {
    const r = await settleFinality(db, key, termsOf(key).finalizationHours, { real });
    total.finalDays += r.finalDays;
    total.closedMonths += r.closedMonths;
  }
  return total;
}

export const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The last day of a `YYYY-MM` month. */
export function lastDayOfPeriod(period: string): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  const next = m === 12 ? `${String(y + 1).padStart(4, '0')}-01-01` : `${period.slice(0, 5)}${String(m + 1).padStart(2, '0')}-01`;
  return addDays(next, -1);
}

/**
 * Staff mark a workflow line's month final: its days' figures stand as entered, the month closes,
 * and a later entry for one of its days is a discrepancy for a person. Only once the month's part
 * of the flight is over on the line's clock; once per month.
 */
export async function finalizeMonthByStaff(
  db: Knex,
  ref: { bookingId: string; lineId: string },
  period: string,
  actor: Actor,
  real = new Date(),
): Promise<{ period: string; finalDays: number }> {
  if (!PERIOD.test(period)) throw badRequest('period must be a month as YYYY-MM.', [{ path: 'body.period', message: 'not a month' }]);
  return db.transaction(async (trx) => {
    const line = await trx('booking_lines as l')
      .join('bookings as b', 'b.id', 'l.booking_id')
      .join('campaigns as c', 'c.id', 'b.campaign_id')
      .where({ 'l.id': ref.lineId, 'l.booking_id': ref.bookingId })
      .forUpdate()
      .first(
        'l.id',
        'l.advertiser_id',
        'l.adapter_key',
        'l.status',
        'l.confirmed_at',
        'l.execution_mode',
        'l.budget_minor',
        trx.raw("to_char(c.start_date, 'YYYY-MM-DD') as start_date"),
        trx.raw("to_char(c.end_date, 'YYYY-MM-DD') as end_date"),
      );
    if (!line) throw notFound();
    if (findAdapter(line.adapter_key)?.kind !== 'workflow') {
      throw conflict('This line’s seller says when its figures are final; staff finalize workflow lines only.', 'not_workflow', 'terminal');
    }
    if (!line.confirmed_at && line.status !== 'confirmed') throw conflict('The line has not run.', 'line_not_running');
    const first = `${period}-01`;
    const last = lastDayOfPeriod(period);
    if (last < line.start_date || first > line.end_date) {
      throw badRequest(`${period} is outside the flight (${line.start_date} to ${line.end_date}).`, [
        { path: 'body.period', message: 'outside the flight' },
      ]);
    }
    const today = dateOnly(clockedNow(line.execution_mode, await readOffsetDays(trx, line.advertiser_id), real));
    const flightLast = last < line.end_date ? last : line.end_date;
    if (flightLast >= today) {
      throw conflict(`The flight’s days in ${period} are not over yet (the last is ${flightLast}; today is ${today}).`, 'period_not_over');
    }
    const finalDays = await trx('delivery_days')
      .where({ line_id: ref.lineId })
      .whereBetween('day', [first, last])
      .whereNull('final_at')
      .update({ final_at: trx.fn.now(), final_source: 'staff' });
    const monthFirst = first > line.start_date ? first : line.start_date;
    const { rows } = await trx.raw(
      `with m as (select ?::uuid as id, ?::date as first_day, ?::date as last_day) select f.* from m cross join lateral (${MONTH_FIGURES('m')}) f`,
      [ref.lineId, monthFirst, flightLast],
    );
    const f = rows[0] as { before_minor: string; month_minor: string; month_impressions: string };
    const budget = Number(line.budget_minor);
    const before = Number(f.before_minor);
    const month = Number(f.month_minor);
    const closed = await trx('delivery_month_closes')
      .insert({
        line_id: ref.lineId,
        period,
        advertiser_id: line.advertiser_id,
        booking_id: ref.bookingId,
        adapter_key: line.adapter_key,
        last_day: flightLast,
        final_minor: month,
        final_impressions: Number(f.month_impressions),
        billable_minor: Math.min(before + month, budget) - Math.min(before, budget),
        billable_before_minor: Math.min(before, budget),
        closed_by: 'staff',
        actor_id: actor.actorId,
      })
      .onConflict(['line_id', 'period'])
      .ignore()
      .returning('line_id');
    if (!closed.length) throw conflict(`${period} is already final for this line.`, 'month_already_final');
    await appendEvent(trx, {
      bookingId: ref.bookingId,
      lineId: ref.lineId,
      action: 'line.delivery-finalized',
      actor,
      detail: { period, finalDays },
    });
    return { period, finalDays };
  });
}
