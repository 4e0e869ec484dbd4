import type { Knex } from 'knex';
import type { BudgetChangeRequest, LineOperationKind, LineOperationRequest } from '../adapters/adapter';
import type { SqlPart } from '../db/knex';
import { claimDue, type DueTable } from '../db/claim-due';

/**
 * Supplier tasks: a booking, or a later operation on a booked line, the supplier accepted and is
 * still working on (AdCP `submitted` or `working`). Its attempt is closed as `pending`, its line
 * stays where the call left it (in progress, stopping, ...), and the task waits
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
  /** The operation the task settles; null for a booking's task. */
  operation_id: string | null;
  /** That operation's kind and the request its supplier was sent. */
  operation: TaskOperation | null;
}

/** What a task of a later operation (not a booking) records of it. */
export interface TaskOperation {
  kind: LineOperationKind;
  request: LineOperationRequest | BudgetChangeRequest;
}

/** The task's INSERT, for the statement that records the pending outcome on the line. */
export function pendingTaskInsert(
  trx: Knex,
  t: {
    attemptId: string;
    bookingId: string;
    lineId: string;
    adapterKey: string;
    outcome: { taskId: string; supplierStatus: string };
    /** A later operation's task: the operation and what its supplier was sent. */
    operation?: TaskOperation & { id: string };
  },
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
      ...(t.operation
        ? { operation_id: t.operation.id, operation: JSON.stringify({ kind: t.operation.kind, request: t.operation.request }) }
        : {}),
    })
    .returning('attempt_id')
    .toSQL();
}

const SUPPLIER_TASKS: DueTable = { table: 'supplier_tasks', id: 'attempt_id', waiting: 'pending', dueAt: 'next_poll_at', count: 'polls' };
const TASK_COLUMNS = [
  'attempt_id',
  'line_id',
  'booking_id',
  'adapter_key',
  'task_id',
  'status',
  'supplier_status',
  'polls',
  'next_poll_at',
  'outcome',
  'created_at',
  'finished_at',
  'operation_id',
  'operation',
];

/** Claims up to `limit` of an adapter's due tasks for one poll each; the next poll is an interval away. */
export const claimDueTasks = (db: Knex, adapterKey: string, intervalMs: number, limit = 20) =>
  claimDue<SupplierTaskRow>(db, SUPPLIER_TASKS, TASK_COLUMNS, adapterKey, intervalMs, limit);

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
  close: { status: string; providerReference?: string | null; detail?: unknown },
): Promise<void> {
  await trx('supplier_tasks')
    .where({ attempt_id: attemptId, status: 'pending' })
    .update({ status: 'done', outcome: JSON.stringify(close.detail), finished_at: trx.fn.now() });
  await trx('supplier_attempts')
    .where({ id: attemptId, status: 'pending' })
    .update({
      status: close.status,
      provider_reference: close.providerReference ?? null,
      detail: JSON.stringify(close.detail),
      finished_at: trx.fn.now(),
    });
}
