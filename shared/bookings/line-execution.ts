import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import type { AdapterContext, BookingOutcome, BookingRequest, SupplierAdapter } from '../adapters/adapter';
import { toMinor } from '../db/knex';
import { lineEnableable } from '../creatives/creative-approvals';
import { bookLineJobId } from '../queues/jobs';
import { supplierQueueName } from '../queues/names';
import {
  openAttemptQuery,
  newAttemptId,
  isUnknown,
  type AttemptCloser,
  type AttemptRow,
  type SupplierCallFlow,
  type Unknown,
} from '../suppliers/attempts';
import type { SubjectHandler } from '../suppliers/stuck-attempts';
import { pendingTaskInsert } from '../suppliers/supplier-tasks';
import { changeLine, isStepAborted, lockLine, stepLine, type LockedLine } from './line-transitions';
import { lineStepBatchers, type Flight } from './line-step-batch';
import { lineInterrupted } from './line-operation-outcomes';
import type { LineRow } from './booking-store';
import { dateOnly } from '../dates';
import { answerClose, lateAnswer, lockForAnswer, redelivered, runLineFlow, startUnderLock, unknownAnswer } from './lines/answer-stages';
import type { ExecutionOptions, ExecutionResult } from './lines/execution';

export type { ExecutionOptions, ExecutionResult } from './lines/execution';

interface LineStart {
  attemptId: string | null;
  request: BookingRequest;
}

const openAttemptId = (trx: Knex, lineId: string) => openAttemptQuery(trx, 'line', lineId, 'book').select('id').limit(1);

/** What the supplier is asked to book for a line. */
const requestOf = (line: LineRow, flight: Flight): Omit<BookingRequest, 'attemptId'> => ({
  bookingId: line.booking_id,
  lineId: line.id,
  channel: line.channel,
  budgetMinor: toMinor(line.budget_minor),
  executionMode: line.execution_mode,
  channelCampaignId: line.channel_campaign_id,
  startDate: dateOnly(flight.start_date),
  endDate: dateOnly(flight.end_date),
  supplierProduct: line.supplier_product ?? null,
  ...(line.daily_cap_minor !== null && line.daily_cap_minor !== undefined ? { dailyCapMinor: toMinor(line.daily_cap_minor) } : {}),
});

function bookingFlow(adapter: SupplierAdapter, job: { bookingId: string; lineId: string }, ctx: AdapterContext) {
  const { bookingId, lineId } = job;
  // The locks taken by `lock` in the outcome transaction, so `apply` need not take them again.
  let held: LockedLine | null = null;
  const flow: SupplierCallFlow<LineStart, BookingOutcome, ExecutionResult> = {
    async begin(trx) {
      // The line, the campaign's flight and any open attempt, in one round trip. Only our own
      // supplier attempts count: a managed-booking attempt belongs to the staff member working the line.
      const open = openAttemptId(trx, lineId).toSQL();
      const locked = await lockLine(trx, bookingId, lineId, {
        sql: `select json_build_object('start_date', c.start_date, 'end_date', c.end_date, 'open_attempt_id', (${open.sql})) from campaigns c where c.id = b.campaign_id`,
        bindings: open.bindings,
      });
      if (!locked) return { kind: 'done', result: 'skipped' };
      const { line } = locked;
      const campaign = locked.read as { start_date: string; end_date: string; open_attempt_id: string | null };
      const openId = campaign.open_attempt_id as string | null;
      if (openId) return redelivered(trx, job, locked, openId);
      // Anything but a queued line still to be booked has already been taken up (or finished, or
      // is queued for another operation): a duplicate delivery.
      if (line.status !== 'queued' || line.operation !== 'book') return { kind: 'done', result: 'skipped' };

      const base = requestOf(line, campaign);
      if (!adapter.callsSupplier) return { kind: 'call', start: { attemptId: null, request: { ...base, attemptId: '' } } };

      const attemptId = await startUnderLock(trx, job, locked, { operation: 'book', jobId: bookLineJobId(lineId) }, (attemptId) => ({
        to: 'in-progress',
        patch: { provider_attempt_id: attemptId, started_at: trx.fn.now() },
        action: 'line.attempt-started',
        detail: { attemptId, adapterKey: line.adapter_key },
      }));
      return { kind: 'call', start: { attemptId, request: { ...base, attemptId } } };
    },

    async tryBegin(db) {
      // The usual start: a queued line of this adapter's with no attempt open, moved to
      // in-progress by the statement that opens its attempt (with other jobs' starts, when
      // several are waiting). Anything else takes `begin`.
      if (!adapter.callsSupplier) return null;
      const attemptId = newAttemptId();
      const started = await lineStepBatchers(db).start.submit({ bookingId, lineId, adapterKey: adapter.descriptor.key, attemptId });
      if (!started) return null;
      return { kind: 'call', start: { attemptId, request: { ...requestOf(started.line, started.flight), attemptId } } };
    },

    call: (start, deadline) => adapter.operations.book(start.request, { ...ctx, ...deadline }),

    async tryApply(db, start, outcome, close) {
      // The usual answer, confirmed or rejected, to the attempt the line still waits on.
      if (isUnknown(outcome) || (outcome.kind !== 'confirmed' && outcome.kind !== 'rejected')) return null;
      const attemptId = start.attemptId!;
      try {
        if (start.request.executionMode === 'sandbox') {
          // A sandbox line moves no money: its step may go with other jobs' steps.
          const recorded = await lineStepBatchers(db).outcome.submit({
            bookingId,
            lineId,
            attemptId,
            to: outcome.kind,
            providerReference: outcome.kind === 'confirmed' ? outcome.providerReference : null,
            evidence: outcome.kind === 'rejected' ? outcome.reason : null,
            detail: outcomeDetail(attemptId, outcome),
            close: flow.closeWith(outcome),
          });
          return recorded ? outcome.kind : null;
        }
        // A live line's money moves in the same transaction as its step.
        const stepped = await db.transaction((trx) =>
          stepLine(trx, {
            bookingId,
            lineId,
            from: 'in-progress',
            to: outcome.kind,
            where: { sql: 'provider_attempt_id = ?', bindings: [attemptId] },
            companionWrite: close('updated'),
            // Every path that closes a line's attempt moves the line off in-progress under its lock; if
            // one ever did not, the attempt would be found closed here and the statement undone.
            companionMustWrite: true,
            ...outcomeChange(trx, attemptId, outcome),
            actor: SYSTEM,
          }),
        );
        return stepped ? outcome.kind : null;
      } catch (err) {
        if (isStepAborted(err)) return null;
        throw err;
      }
    },

    async lock(trx, start) {
      const read = await lockForAnswer(trx, job, start.attemptId, false);
      held = read.held;
      // No line (never expected): the engine closes the attempt itself, as for any other flow.
      return held ? { attemptOpen: read.attemptOpen } : undefined;
    },

    closeWith: answerClose,

    async apply(trx, start, outcome, closer) {
      // The line as `lock` read it is still current: nothing has changed it since.
      const locked = held;
      const expected = start.attemptId ? 'in-progress' : 'queued';
      if (!locked || locked.line.status !== expected || locked.line.operation !== 'book') return flow.late(trx, start, outcome);
      return applyBookingOutcome(trx, job, start, outcome, locked, closer);
    },

    late: (trx, start, outcome) => lateAnswer(trx, job, start.attemptId, outcome),
  };

  return flow;
}

/**
 * Moves a line on its booking attempt's outcome, under the line's lock: the one place a booking's
 * answer changes its line, whether it came back from the call or later (a pending supplier task).
 */
export async function applyBookingOutcome(
  trx: Knex,
  job: { bookingId: string; lineId: string },
  start: { attemptId: string | null },
  outcome: BookingOutcome | Unknown,
  locked: LockedLine,
  closer?: AttemptCloser,
): Promise<ExecutionResult> {
  const { bookingId, lineId } = job;
  const { attemptId } = start;
  if (isUnknown(outcome)) return unknownAnswer(trx, job, attemptId, outcome, locked, closer);
  switch (outcome.kind) {
    case 'pending':
      // The supplier took the request and works on it: the line stays in progress, and the task
      // is asked about (or answers by webhook) until its final outcome moves the line.
      await changeLine(
        trx,
        {
          bookingId,
          lineId,
          actor: SYSTEM,
          action: 'line.supplier-pending',
          companionWrite: closer?.embed(),
          writes: [pendingTaskInsert(trx, { attemptId: attemptId!, bookingId, lineId, adapterKey: locked.line.adapter_key, outcome })],
          detail: { attemptId, taskId: outcome.taskId, supplierStatus: outcome.supplierStatus },
        },
        locked,
      );
      return 'pending';
    case 'workflow':
      await changeLine(
        trx,
        {
          bookingId,
          lineId,
          patch: { workflow_steps: JSON.stringify(outcome.steps) },
          actor: SYSTEM,
          action: 'line.awaiting-staff',
          companionWrite: closer?.embed(),
          detail: { steps: outcome.steps.length },
        },
        locked,
      );
      return 'awaiting-staff';
    case 'confirmed':
    case 'rejected':
      await changeLine(
        trx,
        { bookingId, lineId, to: outcome.kind, ...outcomeChange(trx, attemptId, outcome), actor: SYSTEM, companionWrite: closer?.embed() },
        locked,
      );
      return outcome.kind;
    case 'staged': {
      const staged = await trx('booking_lines').where({ id: lineId }).first('adapter_key', 'creatives');
      const enableable = await lineEnableable(trx, staged);
      await changeLine(
        trx,
        {
          bookingId,
          lineId,
          to: 'stopped',
          patch: { provider_reference: outcome.providerReference, enableable, stop: JSON.stringify({ kind: 'staged' }) },
          actor: SYSTEM,
          action: 'line.staged',
          companionWrite: closer?.embed(),
          detail: { providerReference: outcome.providerReference, attemptId, enableable },
        },
        locked,
      );
      return 'stopped';
    }
  }
}

type DefiniteOutcome = Extract<BookingOutcome, { kind: 'confirmed' | 'rejected' }>;

/** What a line's event says of a supplier's definite answer, whichever path records it. */
const outcomeDetail = (attemptId: string | null, outcome: DefiniteOutcome) =>
  outcome.kind === 'confirmed' ? { providerReference: outcome.providerReference, attemptId } : { reason: outcome.reason, attemptId };

/** How a supplier's definite answer changes its line, whichever path records it. */
function outcomeChange(q: Knex, attemptId: string | null, outcome: DefiniteOutcome) {
  const detail = outcomeDetail(attemptId, outcome);
  return outcome.kind === 'confirmed'
    ? { patch: { provider_reference: outcome.providerReference, confirmed_at: q.fn.now() }, action: 'line.confirmed', detail }
    : { patch: { evidence: outcome.reason }, action: 'line.rejected', detail };
}

/**
 * Runs one line's supplier operation through the supplier-call engine: attempt committed
 * before the call, the attempt id as the supplier's idempotency key, the outcome recorded
 * after. An unknown outcome (timeout, lost answer, crash) sends the line to reconciliation;
 * nothing is ever called twice.
 */
export function executeBookingLine(
  db: Knex,
  adapter: SupplierAdapter,
  job: { bookingId: string; lineId: string },
  opts: ExecutionOptions,
): Promise<ExecutionResult> {
  return runLineFlow(db, bookingFlow(adapter, job, opts.context), opts, { lineId: job.lineId });
}

/** How the stuck-attempt sweep takes over a booking attempt. */
export const lineAttempts: SubjectHandler = {
  async lock(trx, a: AttemptRow) {
    await lockLine(trx, a.booking_id!, a.line_id!);
  },
  async interrupted(trx, a, reason) {
    await lineInterrupted(trx, a.booking_id!, a.line_id!, a.id, reason);
  },
  job: (a) => ({ queue: supplierQueueName(a.adapter_key), jobId: a.job_id ?? bookLineJobId(a.line_id!) }),
};
