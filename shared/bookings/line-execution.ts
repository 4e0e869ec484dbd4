import { withTimeout } from '../timeout';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { SYSTEM } from '../actor';
import { UnknownOutcome, type AdapterContext, type BookingOutcome, type BookingRequest, type SupplierAdapter } from '../adapters/adapter';
import type { Logger } from '../logger';
import { toMinor } from '../db/knex';
import type { LineRow } from './booking-store';
import { changeLine } from './line-transitions';
import { lineEnableable } from '../creatives/creative-approvals';

export type ExecutionResult =
  'skipped' | 'awaiting-staff' | 'reconciliation-required' | 'confirmed' | 'rejected' | 'stopped' | 'outcome-recorded-for-reconciliation';

type Start = { kind: 'done'; result: ExecutionResult } | { kind: 'call'; request: BookingRequest };

/** Commits the attempt before the supplier hears of it, or finds that an earlier delivery already did. */
async function begin(db: Knex, adapter: SupplierAdapter, bookingId: string, lineId: string): Promise<Start> {
  return db.transaction(async (trx): Promise<Start> => {
    const booking = await trx('bookings as b')
      .join('campaigns as c', 'c.id', 'b.campaign_id')
      .where('b.id', bookingId)
      .forUpdate('b')
      .first('b.id', 'c.start_date', 'c.end_date');
    if (!booking) return { kind: 'done', result: 'skipped' };
    const line = (await trx<LineRow>('booking_lines').where({ id: lineId, booking_id: bookingId }).first()) as LineRow | undefined;
    if (!line) return { kind: 'done', result: 'skipped' };

    // Only our own supplier attempts count: a managed-booking attempt belongs to the staff member working the line.
    const open = await trx('supplier_attempts').where({ line_id: lineId, status: 'open', operation: 'book' }).first('id');
    if (open && line.status !== 'in-progress') {
      // Staff or an operator already sent the line to reconciliation (or settled it): just close the attempt.
      await trx('supplier_attempts')
        .where({ id: open.id })
        .update({ status: 'unknown', finished_at: trx.fn.now(), detail: JSON.stringify({ reason: 'redelivered' }) });
      return { kind: 'done', result: 'skipped' };
    }
    if (open) {
      // This job ran before and stopped without recording an outcome: the supplier may have
      // acted. Never call again; a human reconciles it.
      await trx('supplier_attempts')
        .where({ id: open.id })
        .update({ status: 'unknown', finished_at: trx.fn.now(), detail: JSON.stringify({ reason: 'redelivered' }) });
      await changeLine(trx, {
        bookingId,
        lineId,
        to: 'reconciliation-required',
        actor: SYSTEM,
        action: 'line.reconciliation-required',
        detail: { reason: 'The operation was interrupted after it was sent; its outcome is unknown.', attemptId: open.id },
      });
      return { kind: 'done', result: 'reconciliation-required' };
    }
    // Anything but a queued line has already been taken up (or finished): a duplicate delivery.
    if (line.status !== 'queued') return { kind: 'done', result: 'skipped' };

    const dates = (d: string | Date) => (typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10));
    const base: Omit<BookingRequest, 'attemptId'> = {
      bookingId,
      lineId,
      channel: line.channel,
      budgetMinor: toMinor(line.budget_minor),
      executionMode: line.execution_mode,
      channelCampaignId: line.channel_campaign_id,
      startDate: dates(booking.start_date),
      endDate: dates(booking.end_date),
    };

    if (!adapter.callsSupplier) return { kind: 'call', request: { ...base, attemptId: '' } };

    const attemptId = `att_${randomUUID()}`;
    await trx('supplier_attempts').insert({
      id: attemptId,
      line_id: lineId,
      booking_id: bookingId,
      adapter_key: line.adapter_key,
      operation: 'book',
      status: 'open',
    });
    await changeLine(trx, {
      bookingId,
      lineId,
      to: 'in-progress',
      patch: { provider_attempt_id: attemptId, started_at: trx.fn.now() },
      actor: SYSTEM,
      action: 'line.attempt-started',
      detail: { attemptId, adapterKey: line.adapter_key },
    });
    return { kind: 'call', request: { ...base, attemptId } };
  });
}

/** Records what the supplier said, if the line is still waiting for it. */
async function finish(db: Knex, request: BookingRequest, outcome: BookingOutcome | 'unknown', cause?: string): Promise<ExecutionResult> {
  return db.transaction(async (trx): Promise<ExecutionResult> => {
    const { bookingId, lineId, attemptId } = request;
    if (outcome !== 'unknown' && outcome.kind === 'workflow') {
      const line = await trx('booking_lines').where({ id: lineId }).first('status');
      if (line?.status !== 'queued') return 'skipped';
      await changeLine(trx, {
        bookingId,
        lineId,
        patch: { workflow_steps: JSON.stringify(outcome.steps) },
        actor: SYSTEM,
        action: 'line.awaiting-staff',
        detail: { steps: outcome.steps.length },
      });
      return 'awaiting-staff';
    }

    const attemptStatus = outcome === 'unknown' ? 'unknown' : outcome.kind;
    const attemptUpdate = {
      status: attemptStatus,
      provider_reference: outcome !== 'unknown' && 'providerReference' in outcome ? outcome.providerReference : null,
      detail: JSON.stringify(outcome === 'unknown' ? { cause } : outcome),
      finished_at: trx.fn.now(),
    };
    if (attemptId) {
      const updated = await trx('supplier_attempts').where({ id: attemptId, status: 'open' }).update(attemptUpdate);
      // Someone (staff, an operator) already took the line out of our hands: keep the answer
      // on the attempt as evidence, and leave the line to them.
      if (updated === 0) return 'outcome-recorded-for-reconciliation';
    }
    const line = await trx('booking_lines').where({ id: lineId }).first('status');
    const expected = attemptId ? 'in-progress' : 'queued';
    if (line?.status !== expected) {
      if (attemptId) await trx('supplier_attempts').where({ id: attemptId }).update(attemptUpdate);
      return 'outcome-recorded-for-reconciliation';
    }

    if (outcome === 'unknown') {
      await changeLine(trx, {
        bookingId,
        lineId,
        to: 'reconciliation-required',
        actor: SYSTEM,
        action: 'line.reconciliation-required',
        detail: { reason: cause ?? 'The supplier outcome is unknown.', attemptId },
      });
      return 'reconciliation-required';
    }
    switch (outcome.kind) {
      case 'confirmed':
        await changeLine(trx, {
          bookingId,
          lineId,
          to: 'confirmed',
          patch: { provider_reference: outcome.providerReference, confirmed_at: trx.fn.now() },
          actor: SYSTEM,
          action: 'line.confirmed',
          detail: { providerReference: outcome.providerReference, attemptId },
        });
        return 'confirmed';
      case 'rejected':
        await changeLine(trx, {
          bookingId,
          lineId,
          to: 'rejected',
          patch: { evidence: outcome.reason },
          actor: SYSTEM,
          action: 'line.rejected',
          detail: { reason: outcome.reason, attemptId },
        });
        return 'rejected';
      case 'staged': {
        const staged = await trx('booking_lines').where({ id: lineId }).first('adapter_key', 'creatives');
        const enableable = await lineEnableable(trx, staged);
        await changeLine(trx, {
          bookingId,
          lineId,
          to: 'stopped',
          patch: { provider_reference: outcome.providerReference, enableable },
          actor: SYSTEM,
          action: 'line.staged',
          detail: { providerReference: outcome.providerReference, attemptId, enableable },
        });
        return 'stopped';
      }
    }
  });
}

export interface ExecutionOptions {
  timeoutMs: number;
  context: AdapterContext;
  logger: Logger;
}

/**
 * Runs one line's supplier operation: attempt committed before the call, the attempt id as
 * the supplier's idempotency key, the outcome recorded after. An unknown outcome (timeout,
 * lost answer, crash) sends the line to reconciliation; nothing is ever called twice.
 */
export async function executeBookingLine(
  db: Knex,
  adapter: SupplierAdapter,
  job: { bookingId: string; lineId: string },
  opts: ExecutionOptions,
): Promise<ExecutionResult> {
  const start = await begin(db, adapter, job.bookingId, job.lineId);
  if (start.kind === 'done') return start.result;
  let outcome: BookingOutcome;
  try {
    outcome = await withTimeout(
      adapter.book(start.request, opts.context),
      opts.timeoutMs,
      () => new UnknownOutcome(`no answer within ${opts.timeoutMs} ms`),
    );
  } catch (err) {
    const cause = err instanceof UnknownOutcome ? err.message : 'The supplier call failed after it was sent.';
    if (!(err instanceof UnknownOutcome)) opts.logger.error({ err, lineId: job.lineId }, 'supplier call failed; outcome unknown');
    return finish(db, start.request, 'unknown', cause);
  }
  return finish(db, start.request, outcome);
}
