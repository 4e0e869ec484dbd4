import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { conflict } from '../errors';
import type { Actor } from '../actor';
import type { LineRow } from './booking-store';
import { changeLine } from './line-transitions';
import { closeOpenAttemptsSql, openAttempt } from '../suppliers/attempts';

const ExpectedVersion = z.number().int().min(0);
const Evidence = z.string().min(10).max(20000);
const ProviderReference = z.string().trim().min(1).max(200);

export const UncertainSchema = z.strictObject({ expectedVersion: ExpectedVersion, evidence: Evidence }).meta({ id: 'UncertainLine' });
export const ClaimSchema = z.strictObject({ expectedVersion: ExpectedVersion }).meta({ id: 'ClaimLine' });
export const StartSchema = z.strictObject({ expectedVersion: ExpectedVersion }).meta({ id: 'StartLine' });
export const ConfirmSchema = z
  .strictObject({ expectedVersion: ExpectedVersion, providerReference: ProviderReference, evidence: Evidence })
  .meta({ id: 'ConfirmLine' });
export const RejectSchema = z.strictObject({ expectedVersion: ExpectedVersion, evidence: Evidence }).meta({ id: 'RejectLine' });
export const ResolveSchema = z
  .strictObject({
    expectedVersion: ExpectedVersion,
    outcome: z.enum(['applied', 'not-applied']),
    evidence: Evidence,
    providerReference: ProviderReference.optional(),
  })
  .refine((b) => b.outcome === 'not-applied' || b.providerReference !== undefined, {
    path: ['providerReference'],
    message: "providerReference is required when the operation was applied (the supplier's booking reference)",
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

function workflowOnly(line: LineRow): void {
  if (!line.execution_method) {
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

/**
 * Any line whose supplier outcome is in doubt goes to reconciliation-required, with the
 * evidence why. The open attempt closes with it: a supplier answer that arrives later is kept
 * on the attempt as evidence and no longer moves the line.
 */
export function markUncertain(db: Knex, ref: LineRef, body: z.infer<typeof UncertainSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    return changeLine(trx, {
      ...ref,
      expectedVersion: body.expectedVersion,
      to: 'reconciliation-required',
      patch: { evidence: body.evidence },
      actor: op.actor,
      action: 'line.marked-uncertain',
      detail: { evidence: body.evidence },
      alongside: closeOpenAttemptsSql(trx, 'line', ref.lineId, {
        status: 'unknown',
        detail: { cause: 'marked-uncertain', by: op.actor.actorId },
      }),
    });
  });
}

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
        if (!['queued', 'in-progress', 'reconciliation-required'].includes(line.status)) {
          throw conflict(`A ${line.status} line has nothing left to work.`, 'invalid_transition', 'terminal');
        }
        if (line.claimed_by && line.claimed_by !== op.userId)
          throw conflict('Another staff member has claimed this line.', 'claimed_by_another');
      },
    }),
  );
}

/** Starting a workflow line opens its managed-booking attempt. */
export function startLine(db: Knex, ref: LineRef, body: z.infer<typeof StartSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    const attemptId = `att_${randomUUID()}`;
    const line = await changeLine(trx, {
      ...ref,
      expectedVersion: body.expectedVersion,
      to: 'in-progress',
      patch: { provider_attempt_id: attemptId, started_at: trx.fn.now() },
      actor: op.actor,
      action: 'line.started',
      detail: { attemptId },
      guard: claimedBy(op.userId),
    });
    await openAttempt(trx, {
      id: attemptId,
      subjectKind: 'line',
      subjectId: line.id,
      lineId: line.id,
      bookingId: ref.bookingId,
      adapterKey: line.adapter_key,
      operation: 'managed-booking',
    });
    return line;
  });
}

/** The line's open attempt closed by the statement that moves the line. */
const closingAttempt = (trx: Knex, lineId: string, status: string, providerReference: string | null) =>
  closeOpenAttemptsSql(trx, 'line', lineId, { status, providerReference });

export function confirmLine(db: Knex, ref: LineRef, body: z.infer<typeof ConfirmSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    return changeLine(trx, {
      ...ref,
      expectedVersion: body.expectedVersion,
      to: 'confirmed',
      patch: { provider_reference: body.providerReference, evidence: body.evidence, confirmed_at: trx.fn.now() },
      actor: op.actor,
      action: 'line.confirmed',
      detail: { providerReference: body.providerReference },
      guard: claimedBy(op.userId),
      alongside: closingAttempt(trx, ref.lineId, 'confirmed', body.providerReference),
    });
  });
}

export function rejectLine(db: Knex, ref: LineRef, body: z.infer<typeof RejectSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    return changeLine(trx, {
      ...ref,
      expectedVersion: body.expectedVersion,
      to: 'rejected',
      patch: { evidence: body.evidence },
      actor: op.actor,
      action: 'line.rejected',
      detail: { evidence: body.evidence },
      guard: claimedBy(op.userId),
      alongside: closingAttempt(trx, ref.lineId, 'rejected', null),
    });
  });
}

/** Settles a reconciliation-required line from evidence: applied → confirmed, not applied → rejected. */
export function resolveLine(db: Knex, ref: LineRef, body: z.infer<typeof ResolveSchema>, op: Operator) {
  return db.transaction(async (trx) => {
    const applied = body.outcome === 'applied';
    return changeLine(trx, {
      ...ref,
      expectedVersion: body.expectedVersion,
      to: applied ? 'confirmed' : 'rejected',
      patch: {
        evidence: body.evidence,
        ...(applied ? { provider_reference: body.providerReference, confirmed_at: trx.fn.now() } : {}),
      },
      actor: op.actor,
      action: 'line.resolved',
      detail: { outcome: body.outcome, ...(applied ? { providerReference: body.providerReference } : {}) },
      guard: (l) => {
        if (l.status !== 'reconciliation-required') {
          throw conflict(`Only a reconciliation-required line can be resolved; this one is ${l.status}.`, 'invalid_transition', 'terminal');
        }
      },
      alongside: closingAttempt(trx, ref.lineId, applied ? 'confirmed' : 'rejected', body.providerReference ?? null),
    });
  });
}
