import { verifyControls, type VerificationSettings } from './control-verification';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { DeliveryDay } from '../adapters/adapter';
import { findAdapter } from '../adapters/catalogue';
import type { Actor } from '../auth/actor';
import { appendEvent } from '../bookings/booking-events';
import { badRequest, conflict, notFound } from '../errors';
import { notePacingChanges } from './pacing-events';
import { settleDelivery } from './delivery-money';
import { checkReport, markFetched, recordDelivery } from './delivery-store';
import { burnDownMakegoods } from './makegoods';

export const DELIVERY_CSV_COLUMNS = ['date', 'impressions', 'clicks', 'completions', 'spend_minor'] as const;
const MAX_ROWS = 400;

export const DeliveryEntrySchema = z.strictObject({
  /** `date,impressions,clicks,completions,spend_minor`, one row per day (1..400 rows). */
  csv: z.string().min(1).max(100_000),
});

/** A staff member's delivery CSV as days, or a 400 naming the first thing wrong with it. */
export function parseDeliveryCsv(text: string): DeliveryDay[] {
  let records: Array<Record<string, string>>;
  try {
    records = parseCsv(text, { columns: true, bom: true, trim: true, skip_empty_lines: true }) as never;
  } catch (err) {
    throw badRequest(`The CSV could not be parsed: ${(err as Error).message}`, undefined, 'malformed_csv');
  }
  const header = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/, 1)[0]!
    .split(',')
    .map((h) => h.trim());
  if (header.join(',') !== DELIVERY_CSV_COLUMNS.join(',')) {
    throw badRequest(
      `The CSV's header must be ${DELIVERY_CSV_COLUMNS.join(',')}.`,
      [{ path: 'body.csv', message: 'wrong header' }],
      'malformed_csv',
    );
  }
  if (records.length === 0 || records.length > MAX_ROWS) {
    throw badRequest(`A delivery CSV has 1 to ${MAX_ROWS} days.`, [{ path: 'body.csv', message: 'row count' }], 'malformed_csv');
  }
  return records.map((r, i) => {
    const n = (k: string) => {
      if (!/^\d{1,15}$/.test(r[k] ?? '')) {
        throw badRequest(
          `Row ${i + 2}: ${k} must be a whole number, 0 or more.`,
          [{ path: 'body.csv', message: `row ${i + 2}` }],
          'malformed_csv',
        );
      }
      return Number(r[k]);
    };
    return {
      date: r.date ?? '',
      impressions: n('impressions'),
      clicks: n('clicks'),
      completions: n('completions'),
      spendMinor: n('spend_minor'),
    };
  });
}

/**
 * A staff member enters a workflow line's delivery, as its supplier reported it to them (an
 * email, a portal export). Stored like a supplier's report, marked as theirs: every changed
 * figure is a revision recording who entered it, and a live line's spend follows it.
 */
export async function enterDelivery(
  db: Knex,
  ref: { bookingId: string; lineId: string },
  csv: string,
  actor: Actor,
  pacingTolerance: number,
  verification: VerificationSettings,
) {
  const days = parseDeliveryCsv(csv);
  const entered = await db.transaction(async (trx) => {
    const line = await trx('booking_lines as l')
      .join('bookings as b', 'b.id', 'l.booking_id')
      .join('campaigns as c', 'c.id', 'b.campaign_id')
      .where({ 'l.id': ref.lineId, 'l.booking_id': ref.bookingId })
      .first(
        'l.id',
        'l.advertiser_id',
        'l.adapter_key',
        'l.status',
        'l.confirmed_at',
        'l.execution_mode',
        trx.raw("to_char(c.start_date, 'YYYY-MM-DD') as start_date"),
        trx.raw("to_char(c.end_date, 'YYYY-MM-DD') as end_date"),
      );
    if (!line) throw notFound();
    if (findAdapter(line.adapter_key)?.kind !== 'workflow') {
      throw conflict(
        'This line’s supplier reports its own delivery; staff enter delivery for workflow lines only.',
        'not_workflow',
        'terminal',
      );
    }
    if (!line.confirmed_at && line.status !== 'confirmed')
      throw conflict('The line has not run: confirm it before entering its delivery.', 'line_not_running');
    // After the flight, only days towards a make-good the line owes.
    const owed = await trx('makegoods').where({ line_id: ref.lineId, status: 'owed' }).max('due_by as due').first();
    const lastDay = owed?.due && String(owed.due) > line.end_date ? String(owed.due) : line.end_date;
    const outside = days.find((d) => d.date < line.start_date || d.date > lastDay);
    const report = { asOf: new Date().toISOString(), days };
    checkReport(report, 'CSV');
    if (outside) {
      throw badRequest(`${outside.date} is outside the flight (${line.start_date} to ${line.end_date}).`, [
        { path: 'body.csv', message: 'date outside the flight' },
      ]);
    }
    const { changed, restated } = await recordDelivery(
      trx,
      [{ line: { lineId: ref.lineId, advertiserId: line.advertiser_id, bookingId: ref.bookingId }, report }],
      { kind: 'staff', actorId: actor.actorId },
    );
    await markFetched(trx, [{ lineId: ref.lineId, asOf: report.asOf }]);
    if (line.execution_mode === 'live') await settleDelivery(trx, ref.lineId, actor.actorId);
    await notePacingChanges(trx, [ref.lineId], pacingTolerance);
    if (changed.length) await burnDownMakegoods(trx, [ref.lineId]);
    await appendEvent(trx, {
      bookingId: ref.bookingId,
      lineId: ref.lineId,
      action: 'line.delivery-entered',
      actor,
      detail: { days: days.length, changed: changed.length, restatedFinal: restated.length, from: days[0]!.date, to: days.at(-1)!.date },
    });
    return { days: days.length, changed: changed.length, restatedFinal: restated.length };
  });
  // What the supplier's figures now say of the changes it acknowledged on the line.
  const controls = await verifyControls(db, { lineIds: [ref.lineId] }, verification);
  return { ...entered, controlsVerified: controls.verified, controlsFailed: controls.failed };
}
