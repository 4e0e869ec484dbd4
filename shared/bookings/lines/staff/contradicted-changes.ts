import type { Knex } from 'knex';
import { toMinor } from '../../../db/knex';
import { conflict } from '../../../errors';
import type { Actor } from '../../../auth/actor';
import { lineOperationMoney, reserveBudgetIncrease } from '../../booking-money';
import type { LineRow } from '../../booking-store';
import { assertWithinCommitment } from '../../commitment-limit';
import { operationFigures } from '../settle';
import type { LineOperationRow } from '../operation-store';
import { OPERATIONS } from '../operations';
import { operationStates } from '../state';
import { changeLine, type LockedLine } from '../store';

/**
 * A change the supplier said it applied and its delivery then contradicted ("Verified control",
 * docs/bookings.md) leaves its line reconciliation-required with nothing in hand. A person
 * settles it from what they found at the supplier:
 * - applied: the change did take hold after all (the seller caught up, or someone ended the buy
 *   by hand): the line reads as the change left it;
 * - not applied: the supplier still runs the line as before the change: a pause or stop it
 *   ignored leaves the line running, a resume it ignored leaves it paused, a budget it ignored
 *   puts the old budget back (within the campaign's maximum commitment; a raise's hold is given
 *   back, what a cut gave back is held again, or 409 insufficient_funds).
 * The operation's failed verification stays as the record of what happened.
 */
export interface ContradictedResolution {
  applied: boolean;
  expectedVersion: number;
  evidence: string;
  actor: Actor;
  detail: Record<string, unknown>;
}

/** The failed change a reconciliation-required line with nothing in hand is waiting on, if any. */
type VerifiedOperation = LineOperationRow & { verification: string | null };

export async function contradictedChangeOf(trx: Knex, line: LineRow): Promise<LineOperationRow | undefined> {
  if (line.status !== 'reconciliation-required' || line.operation_id) return undefined;
  const last = (await trx('line_operations')
    .where({ line_id: line.id })
    .where({ status: 'applied' })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .forUpdate()
    .first()) as VerifiedOperation | undefined;
  return last?.verification === 'failed' ? last : undefined;
}

export async function resolveContradictedChange(
  trx: Knex,
  locked: LockedLine,
  op: LineOperationRow,
  r: ContradictedResolution,
): Promise<LineRow> {
  const { line } = locked;
  if (line.version !== r.expectedVersion) {
    throw conflict(`The line is at version ${line.version}, not ${r.expectedVersion}. Read it again.`, 'version_conflict');
  }
  const states = operationStates(op.kind, op.from_status);
  const patch: Record<string, unknown> = { evidence: r.evidence };
  let to = states.applied;
  if (!r.applied) {
    // The line as it was before the change was asked, as a refusal would have left it.
    to = states.refused;
    Object.assign(patch, OPERATIONS[op.kind].sets?.before(op));
    if (op.kind === 'change-budget') {
      const before = toMinor(op.budget_from_minor);
      const booking = await trx('bookings').where({ id: line.booking_id }).first('maximum_commitment_minor');
      const lines = (await trx('booking_lines').where({ booking_id: line.booking_id }).orderBy('id')) as LineRow[];
      await assertWithinCommitment(
        trx,
        lines,
        new Map([[line.id, before]]),
        toMinor(booking.maximum_commitment_minor),
        'Putting the old budget back',
      );
    }
  }
  const changed = await changeLine(
    trx,
    {
      bookingId: line.booking_id,
      lineId: line.id,
      expectedVersion: r.expectedVersion,
      to,
      patch,
      actor: r.actor,
      action: 'line.resolved',
      detail: { operation: op.kind, operationId: op.id, contradicted: true, ...operationFigures(op), ...r.detail },
    },
    locked,
  );
  // Applied, the change's money already moved; not applied, it is undone: a raise's hold is given
  // back as a refusal's would be, and what a cut gave back is held again.
  if (!r.applied) {
    await lineOperationMoney(trx, changed, op, 'refused', r.actor.actorId);
    if (op.kind === 'change-budget') await holdAgainWhatTheCutReleased(trx, line, op, r.actor.actorId);
  }
  return changed;
}

async function holdAgainWhatTheCutReleased(trx: Knex, line: LineRow, op: LineOperationRow, actorId: string): Promise<void> {
  const released = await trx('wallet_entries')
    .where({ kind: 'release', subject_type: 'line_operation', subject_id: op.id })
    .first('amount_minor');
  if (!released) return;
  await reserveBudgetIncrease(
    trx,
    { id: op.id, advertiserId: op.advertiser_id, bookingId: line.booking_id, increaseMinor: toMinor(released.amount_minor) },
    actorId,
  );
}
