import type { Knex } from 'knex';
import type { SqlPart } from '../db/knex';

/**
 * Supplier tasks: a booking the supplier accepted and is still working on (AdCP `submitted` or
 * `working`). Its attempt is closed as `pending`, its line stays in progress, and the task waits
 * here until its final outcome arrives, asked for on a schedule (`claimDueTasks`) or pushed by
 * the supplier. A task is claimed by moving its `next_poll_at` on, so two pollers never ask at once
 * and a poller that dies leaves the task due again after one interval.
 */
export interface SupplierTaskRow {
  attempt_id: string;
  line_id: string;
  booking_id: string;
  adapter_key: string;
  task_id: string;
  status: 'pending' | 'done';
  supplier_status: string;
  polls: number;
  next_poll_at: Date;
  outcome: unknown;
  created_at: Date;
  finished_at: Date | null;
}

/** The task's INSERT, for the statement that records the pending outcome on the line. */
export function pendingTaskInsert(
  trx: Knex,
  t: { attemptId: string; bookingId: string; lineId: string; adapterKey: string; outcome: { taskId: string; supplierStatus: string } },
): SqlPart {
  return trx('supplier_tasks')
    .insert({
      attempt_id: t.attemptId,
      line_id: t.lineId,
      booking_id: t.bookingId,
      adapter_key: t.adapterKey,
      task_id: t.outcome.taskId,
      status: 'pending',
      supplier_status: t.outcome.supplierStatus,
      next_poll_at: trx.fn.now(),
    })
    .returning('attempt_id')
    .toSQL();
}

/** Claims up to `limit` of an adapter's due tasks for one poll each; the next poll is an interval away. */
export async function claimDueTasks(db: Knex, adapterKey: string, intervalMs: number, limit = 20): Promise<SupplierTaskRow[]> {
  const { rows } = await db.raw<{ rows: SupplierTaskRow[] }>(
    `update supplier_tasks t set next_poll_at = now() + (? * interval '1 millisecond'), polls = t.polls + 1
      where t.attempt_id in (
        select attempt_id from supplier_tasks
         where adapter_key = ? and status = 'pending' and next_poll_at <= now()
         order by next_poll_at limit ? for update skip locked)
      returning t.*`,
    [intervalMs, adapterKey, limit],
  );
  return rows;
}

export async function findTask(db: Knex, adapterKey: string, taskId: string): Promise<SupplierTaskRow | undefined> {
  return (await db('supplier_tasks').where({ adapter_key: adapterKey, task_id: taskId }).first()) as SupplierTaskRow | undefined;
}

/** Locks a pending task; undefined when it is already done (or unknown). */
export async function lockPendingTask(trx: Knex, attemptId: string): Promise<SupplierTaskRow | undefined> {
  return (await trx('supplier_tasks').where({ attempt_id: attemptId, status: 'pending' }).forUpdate().first()) as
    SupplierTaskRow | undefined;
}

/** The supplier still works on it: keep its last word. */
export async function notePendingStatus(trx: Knex, attemptId: string, supplierStatus: string): Promise<void> {
  await trx('supplier_tasks').where({ attempt_id: attemptId, status: 'pending' }).update({ supplier_status: supplierStatus });
}

/** The task's final outcome: the task is done and its attempt closes with the outcome. */
export async function finishTask(
  trx: Knex,
  attemptId: string,
  close: { status: string; providerReference: string | null; detail: unknown },
): Promise<void> {
  await trx('supplier_tasks')
    .where({ attempt_id: attemptId, status: 'pending' })
    .update({ status: 'done', outcome: JSON.stringify(close.detail), finished_at: trx.fn.now() });
  await trx('supplier_attempts')
    .where({ id: attemptId, status: 'pending' })
    .update({
      status: close.status,
      provider_reference: close.providerReference,
      detail: JSON.stringify(close.detail),
      finished_at: trx.fn.now(),
    });
}
