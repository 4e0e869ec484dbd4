import type { Knex } from 'knex';
import { BOOK_LINE, LINE_OPERATION, bookLineMessage, lineOperationJobId, lineOperationMessage } from '../../queues/jobs';
import { SUPPLIER_QUEUES } from '../../queues/names';
import type { UnsentWork } from '../../suppliers/unsent-work';

// A workflow line whose steps staff hold is theirs, not a lost job's.
const notStaffHeld = (q: Knex.QueryBuilder) => q.whereNull('l.execution_method').orWhereNull('l.workflow_steps');

/** A line still `queued` to be booked, with no booking attempt on record. */
export const unsentBookings: UnsentWork = {
  jobName: BOOK_LINE,
  queues: SUPPLIER_QUEUES,
  idOf: (d) => d.lineId!,
  unsent: (db) =>
    db('booking_lines as l')
      .where({ 'l.status': 'queued', 'l.operation': 'book' })
      .where(notStaffHeld)
      .whereNotExists(db('supplier_attempts as a').whereRaw('a.line_id = l.id').where('a.operation', 'book'))
      .select('l.id', 'l.booking_id', 'l.adapter_key'),
  idColumn: 'l.id',
  sinceColumn: 'l.updated_at',
  message: (r) => bookLineMessage(String(r.adapter_key), { bookingId: String(r.booking_id), lineId: String(r.id) }),
};

/** An operation asked of a booked line, still `requested` and its line's pending one, with no attempt under its job. */
export const unsentLineOperations: UnsentWork = {
  jobName: LINE_OPERATION,
  queues: SUPPLIER_QUEUES,
  idOf: (d) => d.operationId!,
  unsent: (db) =>
    db('line_operations as o')
      .join('booking_lines as l', 'l.id', 'o.line_id')
      .where('o.status', 'requested')
      .whereRaw('l.operation_id = o.id')
      .where(notStaffHeld)
      .whereNotExists(db('supplier_attempts as a').whereRaw(`a.job_id = '${lineOperationJobId('')}' || o.id::text`))
      .select('o.id', 'o.booking_id', 'o.line_id', 'l.adapter_key'),
  idColumn: 'o.id',
  sinceColumn: 'o.created_at',
  message: (r) =>
    lineOperationMessage(String(r.adapter_key), { bookingId: String(r.booking_id), lineId: String(r.line_id), operationId: String(r.id) }),
};
