import type { Knex } from 'knex';
import { recordEvent } from '../events/record';
import { runningLinePacing, type LinePacing } from './delivery-figures';

/**
 * After new delivery figures for these lines: each running line whose pacing status (on-track,
 * under, over) moved is recorded on the line, and subscribers are told in the same transaction
 * (`delivery.pacing_changed`, the line's pacing version as the subject version). A line first
 * seen on track is recorded without an event: nothing moved. A line whose delivered spend first
 * went past its budget is marked, and subscribers are told once (`delivery.over_budget`).
 * Returns how many lines moved or went over.
 */
export async function notePacingChanges(trx: Knex, lineIds: readonly string[], tolerance: number, real = new Date()): Promise<number> {
  if (!lineIds.length) return 0;
  const owners = (await trx('booking_lines')
    .whereIn('id', [...new Set(lineIds)])
    .select('id', 'advertiser_id')) as Array<{
    id: string;
    advertiser_id: string;
  }>;
  const byWorkspace = new Map<string, string[]>();
  for (const o of owners) byWorkspace.set(o.advertiser_id, [...(byWorkspace.get(o.advertiser_id) ?? []), o.id]);
  let moved = 0;
  for (const [workspaceId, ids] of byWorkspace) {
    for (const line of await runningLinePacing(trx, workspaceId, (q) => q.whereIn('l.id', ids), tolerance, real)) {
      const [row] = (await trx('booking_lines')
        .where({ id: line.lineId })
        .whereRaw('pacing_status is distinct from ?', [line.pacing.status])
        .update({ pacing_status: line.pacing.status, pacing_version: trx.raw('pacing_version + 1') })
        .returning(['pacing_version'])) as Array<{ pacing_version: number }>;
      if (line.deliveredSpendMinor > line.budgetMinor && (await markOverBudget(trx, workspaceId, line))) moved++;
      if (!row || (row.pacing_version === 1 && line.pacing.status === 'on-track')) continue;
      moved++;
      await recordEvent(trx, {
        workspaceId,
        type: 'delivery.pacing_changed',
        subjectId: line.lineId,
        subjectVersion: row.pacing_version,
        body: {
          campaignId: line.campaignId,
          bookingId: line.bookingId,
          lineId: line.lineId,
          status: line.pacing.status,
          ratio: line.pacing.ratio,
          expectedSpendMinor: line.pacing.expectedSpendMinor,
          deliveredSpendMinor: line.deliveredSpendMinor,
        },
      });
    }
  }
  return moved;
}

/** Marks the line over its budget and tells subscribers, the first time only; false when it was already. */
async function markOverBudget(trx: Knex, workspaceId: string, line: LinePacing): Promise<boolean> {
  const marked = await trx('booking_lines').where({ id: line.lineId }).whereNull('over_budget_at').update({ over_budget_at: trx.fn.now() });
  if (!marked) return false;
  await recordEvent(trx, {
    workspaceId,
    type: 'delivery.over_budget',
    subjectId: line.lineId,
    subjectVersion: 1,
    body: {
      campaignId: line.campaignId,
      bookingId: line.bookingId,
      lineId: line.lineId,
      budgetMinor: line.budgetMinor,
      deliveredSpendMinor: line.deliveredSpendMinor,
      overDeliveredMinor: line.deliveredSpendMinor - line.budgetMinor,
    },
  });
  return true;
}
