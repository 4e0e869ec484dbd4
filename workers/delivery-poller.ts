import type { Knex } from 'knex';
import type { DeliveryReport, LineAtSupplier, SupplierAdapter } from '../shared/adapters/adapter';
import { addDays, dateOnly } from '../shared/dates';
import { toMinor } from '../shared/db/knex';
import { notePacingChanges } from '../shared/delivery/pacing-events';
import { settleDelivery } from '../shared/delivery/delivery-money';
import { markFetched, markFetchFailed, recordDelivery, type DeliveryReportFor } from '../shared/delivery/delivery-store';
import { closeOutBooking, closeoutDue } from '../shared/delivery/closeout';
import { enforceDailyCaps } from '../shared/delivery/cap-guard';
import { outboxInsert } from '../shared/outbox/outbox';
import { ruleEvaluationMessage } from '../shared/queues/jobs';
import { settleFinality } from '../shared/delivery/finality';
import { burnDownMakegoods, expireMakegoods } from '../shared/delivery/makegoods';
import { SYSTEM } from '../shared/auth/actor';
import type { Logger } from '../shared/logger';
import { withTimeout } from '../shared/timeout';
import { clockedNow } from '../shared/workspaces/sandbox-clock';
import { verifyControls, type VerificationSettings } from '../shared/delivery/control-verification';

export interface PollOptions {
  batchSize: number;
  restatementDays: number;
  /** Hours after a day ends until this supplier's figures for it are final (its billing terms). */
  finalizationHours: number;
  /** Supplier calls a second, at most, for suppliers reached over the network. */
  callsPerSecond: number;
  timeoutMs: number;
  sandboxSlowMs: number;
  /** Pacing off by more than this share moves a line's pacing status (and tells subscribers). */
  pacingTolerance: number;
  /** How this supplier's acknowledged changes are proven by its delivery. */
  verification: VerificationSettings;
  logger: Logger;
  /** Only this workspace's lines (a moved sandbox clock). */
  advertiserId?: string;
  real?: Date;
}

export interface PollResult {
  lines: number;
  fetched: number;
  failed: number;
  changedDays: number;
  /** Final days given another figure: kept apart as discrepancies. */
  restatedFinalDays: number;
  finalDays: number;
  closedMonths: number;
  makegoodsFulfilled: number;
  makegoodsExpired: number;
  closedOut: number;
  /** Changes in flight proven, or contradicted, by the figures. */
  controlsVerified: number;
  controlsFailed: number;
  /** Lines a daily cap paused, and lines it resumed at a new day's start. */
  capPaused: number;
  capResumed: number;
}

interface DueLine {
  id: string;
  booking_id: string;
  advertiser_id: string;
  channel: string;
  execution_mode: 'sandbox' | 'live';
  channel_campaign_id: string;
  provider_reference: string | null;
  provider_attempt_id: string | null;
  budget_minor: string;
  daily_cap_minor: string | null;
  start_date: string;
  end_date: string;
  offset_days: number | null;
  /** The latest due date of a make-good the line owes: it is asked about until then, after its flight. */
  makegood_due: string | null;
}

const NETWORKED = new Set(['live', 'adcp']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Asks one supplier for the delivery of its lines that ran (running, paused or ended, their
 * booking not closed out), in batches of `batchSize` by line id. For each line: the days from the
 * start of the restatement window to yesterday, on the line's clock. A supplier that cannot be
 * asked leaves the line's figures as they were and records the failure (their age shows); nothing
 * is invented. Then bookings whose restatement window has closed are closed out.
 */
export async function pollDelivery(db: Knex, adapter: SupplierAdapter, opts: PollOptions): Promise<PollResult> {
  const result: PollResult = {
    lines: 0,
    fetched: 0,
    failed: 0,
    changedDays: 0,
    restatedFinalDays: 0,
    finalDays: 0,
    closedMonths: 0,
    makegoodsFulfilled: 0,
    makegoodsExpired: 0,
    closedOut: 0,
    controlsVerified: 0,
    controlsFailed: 0,
    capPaused: 0,
    capResumed: 0,
  };
  const reporter = adapter.reporter;
  const real = opts.real ?? new Date();
  // Suppliers reached over the network (live connections, AdCP sellers) are asked at most
  // `callsPerSecond` times a second; the sandbox's own suppliers are not.
  const throttled = NETWORKED.has(adapter.descriptor.kind);
  if (reporter) {
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const batch = (await db('booking_lines as l')
        .join('bookings as b', 'b.id', 'l.booking_id')
        .join('campaigns as c', 'c.id', 'b.campaign_id')
        .leftJoin('sandbox_clocks as sc', 'sc.advertiser_id', 'b.advertiser_id')
        .where('l.adapter_key', adapter.descriptor.key)
        // Lines that ran: confirmed now, or at some point.
        .where((w) => w.whereNotNull('l.confirmed_at').orWhere('l.status', 'confirmed'))
        .whereNot('l.status', 'rejected')
        // A closed-out booking's line is still asked about while it owes a make-good.
        .where((w) => w.whereNull('b.closed_out_at').orWhereExists(db('makegoods as m').whereRaw("m.line_id = l.id and m.status = 'owed'")))
        .where('l.id', '>', after)
        .modify((q) => (opts.advertiserId ? q.where('b.advertiser_id', opts.advertiserId) : q))
        .orderBy('l.id')
        .limit(opts.batchSize)
        .select(
          'l.id',
          'l.booking_id',
          'l.advertiser_id',
          'l.channel',
          'l.execution_mode',
          'l.channel_campaign_id',
          'l.provider_reference',
          'l.provider_attempt_id',
          'l.budget_minor',
          'l.daily_cap_minor',
          db.raw("to_char(c.start_date, 'YYYY-MM-DD') as start_date"),
          db.raw("to_char(c.end_date, 'YYYY-MM-DD') as end_date"),
          'sc.offset_days',
          db.raw(
            "(select to_char(max(m.due_by), 'YYYY-MM-DD') from makegoods m where m.line_id = l.id and m.status = 'owed') as makegood_due",
          ),
        )) as DueLine[];
      if (!batch.length) break;
      after = batch[batch.length - 1]!.id;
      await pollBatch(db, adapter, batch, opts, real, throttled, result);
      if (batch.length < opts.batchSize) break;
    }
  }
  // What the figures now say of the changes this supplier acknowledged (while their bookings are open).
  const controls = await verifyControls(
    db,
    { adapterKey: adapter.descriptor.key, real, ...(opts.advertiserId ? { advertiserId: opts.advertiserId } : {}) },
    opts.verification,
  );
  result.controlsVerified = controls.verified;
  result.controlsFailed = controls.failed;
  if (controls.failed)
    opts.logger.warn({ adapterKey: adapter.descriptor.key, ...controls }, 'changes contradicted by the supplier; lines sent to a person');
  // Days past the seller's window become final and closed months close before closeout, which waits for them.
  const finality = await settleFinality(db, adapter.descriptor.key, opts.finalizationHours, {
    real,
    ...(opts.advertiserId ? { advertiserId: opts.advertiserId } : {}),
  });
  result.finalDays = finality.finalDays;
  result.closedMonths = finality.closedMonths;
  result.makegoodsExpired = await expireMakegoods(
    db,
    { adapterKey: adapter.descriptor.key, ...(opts.advertiserId ? { advertiserId: opts.advertiserId } : {}) },
    real,
  );
  // Daily caps are enforced on the figures just stored (the outbox relays their pauses and resumes).
  const caps = await enforceDailyCaps(db, { real, ...(opts.advertiserId ? { advertiserId: opts.advertiserId } : {}) });
  result.capPaused = caps.paused.length;
  result.capResumed = caps.resumed.length;
  for (const bookingId of await closeoutDue(db, opts.restatementDays, real)) {
    if ((await closeOutBooking(db, bookingId, opts.verification)).closed) result.closedOut += 1;
  }
  // The rules read the figures just stored: a cycle for the workspace polled (or for all).
  await outboxInsert(db, [ruleEvaluationMessage(opts.advertiserId, real)]);
  return result;
}

async function pollBatch(
  db: Knex,
  adapter: SupplierAdapter,
  batch: DueLine[],
  opts: PollOptions,
  real: Date,
  throttled: boolean,
  result: PollResult,
): Promise<void> {
  const reports: DeliveryReportFor[] = [];
  const failed: Array<{ id: string; error: string }> = [];
  for (const l of batch) {
    const now = clockedNow(l.execution_mode, Number(l.offset_days ?? 0), real);
    const yesterday = addDays(dateOnly(now), -1);
    const from = [l.start_date, addDays(yesterday, -opts.restatementDays)].sort().at(-1)!;
    const lastAsked = l.makegood_due && l.makegood_due > l.end_date ? l.makegood_due : l.end_date;
    const to = [lastAsked, yesterday].sort()[0]!;
    if (from > to) continue;
    result.lines += 1;
    const line: LineAtSupplier = {
      bookingId: l.booking_id,
      lineId: l.id,
      channel: l.channel,
      executionMode: l.execution_mode,
      channelCampaignId: l.channel_campaign_id,
      providerReference: l.provider_reference,
      bookingAttemptId: l.provider_attempt_id,
      budgetMinor: toMinor(l.budget_minor),
      startDate: l.start_date,
      endDate: l.end_date,
      dailyCapMinor: l.daily_cap_minor === null ? null : toMinor(l.daily_cap_minor),
    };
    if (throttled) await sleep(Math.ceil(1000 / opts.callsPerSecond));
    try {
      const report: DeliveryReport = await withTimeout(
        adapter.reporter!.delivery(line, from, to, { db, sandboxSlowMs: opts.sandboxSlowMs, now }),
        opts.timeoutMs,
        () => new Error('the supplier did not answer in time'),
      );
      // Only the days asked for: a supplier's extra days are not ours to keep.
      reports.push({
        line: { lineId: l.id, advertiserId: l.advertiser_id, bookingId: l.booking_id },
        report: { asOf: report.asOf, days: report.days.filter((d) => d.date >= from && d.date <= to) },
      });
    } catch (err) {
      failed.push({ id: l.id, error: err instanceof Error ? `${err.name}: ${err.message}` : 'unknown error' });
    }
  }
  if (reports.length) {
    const live = new Set(batch.filter((l) => l.execution_mode === 'live').map((l) => l.id));
    await db.transaction(async (trx) => {
      const { changed, restated } = await recordDelivery(trx, reports, { kind: 'supplier' });
      result.changedDays += changed.length;
      result.restatedFinalDays += restated.length;
      result.makegoodsFulfilled += await burnDownMakegoods(trx, [...new Set(changed.map((c) => c.lineId))]);
      for (const lineId of new Set(changed.map((c) => c.lineId))) if (live.has(lineId)) await settleDelivery(trx, lineId, SYSTEM.actorId);
      await notePacingChanges(
        trx,
        changed.map((c) => c.lineId),
        opts.pacingTolerance,
        real,
      );
      await markFetched(
        trx,
        reports.map((r) => ({ lineId: r.line.lineId, asOf: r.report.asOf })),
      );
    });
    result.fetched += reports.length;
  }
  for (const f of failed) {
    await markFetchFailed(db, [f.id], f.error);
    opts.logger.warn(
      { adapterKey: adapter.descriptor.key, lineId: f.id, error: f.error },
      'delivery fetch failed; figures kept as they were',
    );
  }
  result.failed += failed.length;
}
