import type { Knex } from 'knex';
import { z } from 'zod';
import { conflict, notFound } from '../errors';
import { appendEvent } from './booking-events';
import { FOLLOW_UP_SQL } from './booking-store';
import { Evidence, type Operator } from './lines/staff/staff-actions';

/**
 * Follow-ups (docs/bookings.md, "Verified control"): what a supplier that does less than it says
 * leaves to a person, such as ending a buy by hand at a seller with no cancel path. The operation's
 * attempt carries it; it is a staff task until someone records it done, with the evidence.
 */
export const FollowUpDoneSchema = z.strictObject({ operationId: z.uuid(), evidence: Evidence }).meta({ id: 'FollowUpDone' });

export async function completeFollowUp(
  db: Knex,
  ref: { bookingId: string; lineId: string },
  body: z.output<typeof FollowUpDoneSchema>,
  who: Operator,
): Promise<void> {
  await db.transaction(async (trx) => {
    const op = await trx('line_operations as o')
      .where({ 'o.id': body.operationId, 'o.booking_id': ref.bookingId, 'o.line_id': ref.lineId })
      .forUpdate()
      .first('o.id', 'o.kind', 'o.follow_up_done_at', trx.raw(`${FOLLOW_UP_SQL} as follow_up`));
    if (!op) throw notFound();
    if (!op.follow_up) throw conflict('This operation left nothing for a person to do at the supplier.', 'no_follow_up', 'terminal');
    if (op.follow_up_done_at) throw conflict('This follow-up is already recorded done.', 'follow_up_done', 'terminal');
    await trx('line_operations')
      .where({ id: op.id })
      .update({ follow_up_done_at: trx.fn.now(), follow_up_done_by: who.userId, follow_up_evidence: body.evidence });
    await appendEvent(trx, {
      bookingId: ref.bookingId,
      lineId: ref.lineId,
      action: 'line.follow-up-done',
      actor: who.actor,
      detail: { operationId: op.id, operation: op.kind, followUp: op.follow_up, evidence: body.evidence },
    });
  });
}
