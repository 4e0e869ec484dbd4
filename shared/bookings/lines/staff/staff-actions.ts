import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest, conflict, notFound } from '../../../errors';
import type { Actor } from '../../../auth/actor';
import type { LineRow } from '../../booking-store';
import { changeLine, lockLine, type LockedLine } from '../store';
import { closeOpenAttemptsSql, openAttempt } from '../../../suppliers/attempts';
import { amendmentLineSettled } from '../../amendment-status';
import { outcomeAction, settleLineOperation } from '../settle';
import { lockLineOperation, markLineOperation, type LineOperationRow } from '../operation-store';
import { isOpen, operationStates } from '../state';
import { CitedBrowserJobs, citedEvidence } from '../../browser-evidence-citation';
import { contradictedChangeOf, resolveContradictedChange } from './contradicted-changes';

const ExpectedVersion = z.number().int().min(0);
export const Evidence = z.string().min(10).max(20000);
const ProviderReference = z.string().trim().min(1).max(200);

export const UncertainSchema = z.strictObject({ expectedVersion: ExpectedVersion, evidence: Evidence }).meta({ id: 'UncertainLine' });
export const ClaimSchema = z.strictObject({ expectedVersion: ExpectedVersion }).meta({ id: 'ClaimLine' });
export const StartSchema = z.strictObject({ expectedVersion: ExpectedVersion }).meta({ id: 'StartLine' });
/** `providerReference` is needed to confirm a booking; a change after it (pause, resume, stop, budget) may carry one. */
export const ConfirmSchema = z
  .strictObject({
    expectedVersion: ExpectedVersion,
    providerReference: ProviderReference.optional(),
    evidence: Evidence,
    browserJobIds: CitedBrowserJobs.optional(),
  })
  .meta({ id: 'ConfirmLine' });
export const RejectSchema = z
  .strictObject({ expectedVersion: ExpectedVersion, evidence: Evidence, browserJobIds: CitedBrowserJobs.optional() })
  .meta({ id: 'RejectLine' });
export const ResolveSchema = z
  .strictObject({
    expectedVersion: ExpectedVersion,
    outcome: z.enum(['applied', 'not-applied']),
    evidence: Evidence,
    providerReference: ProviderReference.optional(),
    browserJobIds: CitedBrowserJobs.optional(),
  })
  .meta({ id: 'ResolveLine' });

export interface Operator {
  actor: Actor;
  userId: string;
  /** The staff member's uuid (assignedToUserId); null for a customer's operator. */
  staffId: string | null;
}

interface LineRef {
  bookingId: string;
  lineId: string;
}

/** A supplier adapter's booking it handed to a person (an AdCP seller's input-required): staff answer it. */
const handedToStaff = (line: LineRow) =>
  line.execution_method === null && line.workflow_steps != null && line.operation === 'book' && line.status === 'in-progress';

function workflowOnly(line: LineRow): void {
  if (!line.execution_method && !handedToStaff(line)) {
    throw conflict(
      'Only manual and computer-use lines are worked by staff; this line is run by its supplier adapter.',
      'not_a_workflow_line',
      'terminal',
    );
  }
}

function claimedBy(userId: string) {
  return (line: LineRow) => {
    workflowOnly(line);
    if (line.claimed_by !== userId) throw conflict('Claim the line before working it.', 'claim_required');
  };
}

/** The operation a line has in hand, where it stands, and the statuses that go with it. */
async function inHand(trx: Knex, line: LineRow) {
  const op = line.operation !== 'book' && line.operation_id ? await lockLineOperation(trx, line.operation_id) : undefined;
  const states = operationStates(line.operation, op?.from_status ?? line.status);
  return { op, states };
}

/**
 * Any line whose supplier outcome is in doubt goes to reconciliation-required, with the
 * evidence why: a line whose operation (its booking, or a pause, resume, stop or budget change
 * after it) is with the supplier now. The open attempt closes with it: a supplier answer that
 * arrives later is kept on the attempt as evidence and no longer moves the line.
 */
export function markUncertain(db: Knex, ref: LineRef, body: z.infer<typeof UncertainSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, ref.bookingId, ref.lineId);
    if (!locked) throw notFound();
    const { op: pending, states } = await inHand(trx, locked.line);
    const inFlight = pending
      ? pending.status === 'in-flight' && locked.line.status === states.inFlight
      : locked.line.status === 'in-progress';
    // A stale version is told as such first (changeLine checks it); then a line with nothing in flight.
    if (!inFlight && locked.line.version === body.expectedVersion) {
      throw conflict(
        `Only a line whose operation is with its supplier can be marked uncertain; this one is ${locked.line.status}${pending ? ` with a ${pending.kind} ${pending.status}` : ''}.`,
        'invalid_transition',
        'terminal',
      );
    }
    const line = await changeLine(
      trx,
      {
        ...ref,
        expectedVersion: body.expectedVersion,
        to: 'reconciliation-required',
        patch: { evidence: body.evidence },
        actor: op.actor,
        action: 'line.marked-uncertain',
        detail: { evidence: body.evidence, operation: locked.line.operation },
        companionWrite: closeOpenAttemptsSql(trx, 'line', ref.lineId, {
          status: 'unknown',
          detail: { cause: 'marked-uncertain', by: op.actor.actorId },
        }),
      },
      locked,
    );
    if (pending) {
      await markLineOperation(trx, pending.id, 'reconciliation-required', { reason: body.evidence });
      if (pending.amendment_id) await amendmentLineSettled(trx, pending.amendment_id, op.actor);
    }
    return line;
  });
}

/** A workflow line with something for staff to do: an open status, or an operation in hand. */
const hasWork = (line: LineRow) => isOpen(line.status) || line.operation_id !== null;

export function claimLine(db: Knex, ref: LineRef, body: z.infer<typeof ClaimSchema>, op: Operator & { staffId: string }) {
  return db.transaction((trx) =>
    changeLine(trx, {
      ...ref,
      expectedVersion: body.expectedVersion,
      patch: { claimed_by: op.userId, assigned_to_user_id: op.staffId, assigned_at: trx.fn.now() },
      actor: op.actor,
      action: 'line.claimed',
      guard: (line) => {
        workflowOnly(line);
        if (!hasWork(line)) {
          throw conflict(`A ${line.status} line has nothing left to work.`, 'invalid_transition', 'terminal');
        }
        if (line.claimed_by && line.claimed_by !== op.userId)
          throw conflict('Another staff member has claimed this line.', 'claimed_by_another');
      },
    }),
  );
}

/**
 * Starting a workflow line's operation opens its managed attempt (the staff member's own, never
 * swept): the booking (queued → in-progress), or a change asked after it (a pause or stop:
 * stop-requested → stopping; a resume: queued → in-progress; a budget change keeps the status).
 */
export function startLine(db: Knex, ref: LineRef, body: z.infer<typeof StartSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, ref.bookingId, ref.lineId);
    if (!locked) throw notFound();
    const { op: pending, states } = await inHand(trx, locked.line);
    const attemptId = `att_${randomUUID()}`;
    const operation = pending ? `managed-${pending.kind}` : 'managed-booking';
    const line = await changeLine(
      trx,
      {
        ...ref,
        expectedVersion: body.expectedVersion,
        ...(states.inFlight !== locked.line.status ? { to: states.inFlight } : {}),
        patch: { provider_attempt_id: attemptId, ...(pending ? {} : { started_at: trx.fn.now() }) },
        actor: op.actor,
        action: pending ? `line.${pending.kind}-started` : 'line.started',
        detail: { attemptId, ...(pending ? { operation: pending.kind, operationId: pending.id } : {}) },
        guard: (l) => {
          claimedBy(op.userId)(l);
          if (l.status !== states.requested || (pending && pending.status !== 'requested')) {
            throw conflict(`There is nothing to start on a ${l.status} line.`, 'invalid_transition', 'terminal');
          }
        },
      },
      locked,
    );
    await openAttempt(trx, {
      id: attemptId,
      subjectKind: 'line',
      subjectId: line.id,
      lineId: line.id,
      bookingId: ref.bookingId,
      adapterKey: line.adapter_key,
      operation,
    });
    if (pending) await markLineOperation(trx, pending.id, 'in-flight', { attemptId });
    return line;
  });
}

/** Cited browser evidence goes with the event, beside the words. */
const citing = (cited: Awaited<ReturnType<typeof citedEvidence>>) => (cited ? { browserEvidence: cited } : {});

/** The line's open attempt closed by the statement that moves the line. */
const closingAttempt = (trx: Knex, lineId: string, status: string, providerReference: string | null) =>
  closeOpenAttemptsSql(trx, 'line', lineId, { status, providerReference });

/** A booking confirmed needs the supplier's booking reference; a later change may carry one. */
function referenceNeeded(line: LineRow, providerReference: string | undefined): void {
  if (line.operation === 'book' && !providerReference) {
    throw badRequest("The supplier's booking reference is needed to confirm a booking.", [
      { path: 'providerReference', message: 'required to confirm a booking' },
    ]);
  }
}

/**
 * Staff settling a line's operation by hand: the line locked (404 if it is gone), its operation
 * in hand and the browser evidence they cite, read under the lock for `settle`.
 */
async function settleByStaff<T>(
  db: Knex,
  ref: LineRef,
  browserJobIds: readonly string[] | undefined,
  settle: (
    trx: Knex.Transaction,
    locked: LockedLine,
    read: {
      pending: LineOperationRow | undefined;
      states: ReturnType<typeof operationStates>;
      cited: Awaited<ReturnType<typeof citedEvidence>>;
    },
  ) => Promise<T>,
): Promise<T> {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, ref.bookingId, ref.lineId);
    if (!locked) throw notFound();
    const { op: pending, states } = await inHand(trx, locked.line);
    const cited = await citedEvidence(trx, ref.lineId, browserJobIds);
    return settle(trx, locked, { pending, states, cited });
  });
}

/** Staff record that the supplier did what the line's operation asked (the booking, or a change after it). */
export function confirmLine(db: Knex, ref: LineRef, body: z.infer<typeof ConfirmSchema>, op: Operator) {
  return settleByStaff(db, ref, body.browserJobIds, (trx, locked, { pending, states, cited }) =>
    settleLineOperation(trx, locked, {
      applied: true,
      expectedVersion: body.expectedVersion,
      actor: op.actor,
      action: outcomeAction(locked.line.operation, true),
      evidence: body.evidence,
      providerReference: body.providerReference ?? null,
      // The evidence with the event too: the line's own field is overwritten by whatever comes next.
      detail: { providerReference: body.providerReference ?? null, evidence: body.evidence, ...citing(cited) },
      guard: (l) => {
        claimedBy(op.userId)(l);
        if (l.status !== states.inFlight || (pending && pending.status !== 'in-flight')) {
          throw conflict(`Start the line's ${l.operation} before confirming it; it is ${l.status}.`, 'invalid_transition', 'terminal');
        }
        referenceNeeded(l, body.providerReference);
      },
      companionWrite: closingAttempt(trx, ref.lineId, 'confirmed', body.providerReference ?? null),
    }),
  );
}

/** Staff record that the supplier refused what the line's operation asked. */
export function rejectLine(db: Knex, ref: LineRef, body: z.infer<typeof RejectSchema>, op: Operator) {
  return settleByStaff(db, ref, body.browserJobIds, (trx, locked, { pending, states, cited }) =>
    settleLineOperation(trx, locked, {
      applied: false,
      expectedVersion: body.expectedVersion,
      actor: op.actor,
      action: outcomeAction(locked.line.operation, false),
      evidence: body.evidence,
      detail: { evidence: body.evidence, ...citing(cited) },
      guard: (l) => {
        claimedBy(op.userId)(l);
        const waiting = l.status === states.requested || l.status === states.inFlight;
        if (!waiting || (pending && !['requested', 'in-flight'].includes(pending.status))) {
          throw conflict(`There is nothing to reject on a ${l.status} line.`, 'invalid_transition', 'terminal');
        }
      },
      companionWrite: closingAttempt(trx, ref.lineId, 'rejected', null),
    }),
  );
}

/**
 * Settles a reconciliation-required line from evidence, as its operation was or was not applied:
 * a booking → confirmed or rejected; a pause or stop → stopped, or back as it was; a resume →
 * running, or still stopped; a budget change → the new budget, or the old. A line whose applied
 * change its delivery contradicted is settled the same way (contradicted-changes.ts).
 */
export function resolveLine(db: Knex, ref: LineRef, body: z.infer<typeof ResolveSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, ref.bookingId, ref.lineId);
    if (!locked) throw notFound();
    const applied = body.outcome === 'applied';
    const cited = await citedEvidence(trx, ref.lineId, body.browserJobIds);
    const contradicted = await contradictedChangeOf(trx, locked.line);
    if (contradicted) {
      return resolveContradictedChange(trx, locked, contradicted, {
        applied,
        expectedVersion: body.expectedVersion,
        evidence: body.evidence,
        actor: op.actor,
        detail: { outcome: body.outcome, evidence: body.evidence, ...citing(cited) },
      });
    }
    return settleLineOperation(trx, locked, {
      applied,
      expectedVersion: body.expectedVersion,
      actor: op.actor,
      action: 'line.resolved',
      evidence: body.evidence,
      providerReference: body.providerReference ?? null,
      detail: {
        outcome: body.outcome,
        ...(applied && body.providerReference ? { providerReference: body.providerReference } : {}),
        evidence: body.evidence,
        ...citing(cited),
      },
      guard: (l) => {
        if (l.status !== 'reconciliation-required') {
          throw conflict(`Only a reconciliation-required line can be resolved; this one is ${l.status}.`, 'invalid_transition', 'terminal');
        }
        if (applied) referenceNeeded(l, body.providerReference);
      },
      companionWrite: closingAttempt(trx, ref.lineId, applied ? 'confirmed' : 'rejected', body.providerReference ?? null),
    });
  });
}
