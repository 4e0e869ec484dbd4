import type { Knex } from 'knex';
import { conflict } from '../../errors';
import { SYSTEM, type Actor } from '../../auth/actor';
import type { SqlPart } from '../../db/knex';
import type { LineRow } from '../booking-store';
import { lineOperationMoney } from '../booking-money';
import { amendmentLineSettled } from '../amendment-status';
import { lockLineOperation, markLineOperation, type HeldOperation } from './operation-store';
import { operationStates, type LineStatus } from './state';
import { bookingOutcomePatch } from './book';
import { OPERATIONS } from './operations';
import { changeLine, lockLine, type LockedLine } from './store';
import type { AttemptCloser } from '../../suppliers/attempts';

/** How an operation's outcome was decided: by its supplier, a staff member, or a person's resolution. */
export interface OperationSettlement {
  /** The supplier did it (or evidence shows it did). */
  applied: boolean;
  actor: Actor;
  action: string;
  evidence?: string | null;
  providerReference?: string | null;
  detail?: Record<string, unknown>;
  expectedVersion?: number;
  companionWrite?: SqlPart;
  guard?: (line: LineRow) => void;
}

/** The event action an operation's outcome is recorded under, unless the caller names its own. */
export const outcomeAction = (op: LineRow['operation'], applied: boolean): string => OPERATIONS[op].events[applied ? 'applied' : 'refused'];

/**
 * The one way an operation's outcome moves its line, whoever decided it (the supplier's answer,
 * staff confirming or refusing a workflow line's operation, a resolution with evidence): the
 * status the operation leads to, what it changes on the line, its record, and the money it moves.
 * The caller holds the line's lock (`locked`).
 */
export async function settleLineOperation(
  trx: Knex,
  locked: LockedLine,
  s: OperationSettlement,
  /** The line's pending operation, when the caller read it with the line's lock (saves reading it again). */
  held?: HeldOperation,
): Promise<LineRow> {
  const { line } = locked;
  const base = { bookingId: line.booking_id, lineId: line.id, actor: s.actor, action: s.action };
  if (line.operation === 'book') {
    const states = operationStates('book', line.status);
    return changeLine(
      trx,
      {
        ...base,
        expectedVersion: s.expectedVersion,
        to: s.applied ? states.applied : states.refused,
        patch: bookingOutcomePatch(trx, s),
        detail: s.detail,
        companionWrite: s.companionWrite,
        guard: s.guard,
      },
      locked,
    );
  }

  const op = held ?? (line.operation_id ? await lockLineOperation(trx, line.operation_id) : undefined);
  // A line whose last change finished without a supplier operation (a stop of a line nobody had sent)
  // has nothing in hand: a person's confirm, reject or resolve of it is refused, not a crash.
  if (!op) throw conflict(`The line has no ${line.operation} in hand to settle; read it again.`, 'invalid_transition', 'terminal');
  const { to, patch } = settlement(op, s);
  const changed = await changeLine(
    trx,
    {
      ...base,
      expectedVersion: s.expectedVersion,
      ...(to !== line.status ? { to } : {}),
      patch,
      detail: { operation: op.kind, operationId: op.id, ...operationFigures(op), ...(s.detail ?? {}) },
      companionWrite: s.companionWrite,
      writes: [
        markLineOperation(trx, op.id, s.applied ? 'applied' : 'refused', { reason: s.applied ? null : (s.evidence ?? null) }).toSQL(),
      ],
      guard: s.guard,
    },
    locked,
  );
  await lineOperationMoney(trx, changed, op, s.applied ? 'applied' : 'refused', s.actor.actorId);
  if (op.amendment_id) await amendmentLineSettled(trx, op.amendment_id, s.actor);
  return changed;
}

/**
 * Where an operation's outcome takes its line, and what it changes on it: the one table every
 * path that settles an operation reads (the locked step, the lock-free step of a sandbox line).
 */
export function settlement(op: HeldOperation, s: Pick<OperationSettlement, 'applied' | 'evidence' | 'providerReference'>) {
  const states = operationStates(op.kind, op.from_status);
  const to: LineStatus = s.applied ? states.applied : states.refused;
  const patch: Record<string, unknown> = { operation_id: null, ...(s.evidence ? { evidence: s.evidence } : {}) };
  if (s.providerReference) patch.provider_reference = s.providerReference;
  // Applied, what the operation sets; refused, the line as it was before it was asked.
  const { sets } = OPERATIONS[op.kind];
  Object.assign(patch, s.applied ? sets?.applied(op) : sets?.before(op));
  return { from: states.inFlight, to, patch };
}

/** What an operation's events say of the change it asks (a budget change's figures), as declared with it. */
export const operationFigures = (op: HeldOperation): Record<string, unknown> => OPERATIONS[op.kind].figures?.(op) ?? {};

/**
 * A call interrupted with its outcome unknown (a timeout, a lost answer, a crash, a redelivery,
 * the stuck-attempt sweep): the line goes to reconciliation-required with the operation in doubt
 * named, if it is still waiting on that attempt. False when it no longer was (someone settled it).
 */
export async function lineInterrupted(
  trx: Knex,
  bookingId: string,
  lineId: string,
  attemptId: string,
  reason: string,
  held?: LockedLine | null,
  closer?: AttemptCloser,
  heldOp?: HeldOperation,
): Promise<boolean> {
  const locked = held ?? (await lockLine(trx, bookingId, lineId));
  if (!locked || locked.line.provider_attempt_id !== attemptId) return false;
  const { line } = locked;
  const op = line.operation !== 'book' && line.operation_id ? (heldOp ?? (await lockLineOperation(trx, line.operation_id))) : undefined;
  const inFlight = op ? operationStates(op.kind, op.from_status).inFlight : 'in-progress';
  if (line.status !== inFlight || (op && op.status !== 'in-flight')) return false;
  await changeLine(
    trx,
    {
      bookingId,
      lineId,
      to: 'reconciliation-required',
      actor: SYSTEM,
      action: 'line.reconciliation-required',
      detail: { reason, attemptId, operation: line.operation },
      companionWrite: closer?.embed(),
      writes: op ? [markLineOperation(trx, op.id, 'reconciliation-required', { reason }).toSQL()] : [],
    },
    locked,
  );
  if (op?.amendment_id) await amendmentLineSettled(trx, op.amendment_id, SYSTEM);
  return true;
}
