import type { Knex } from 'knex';
import { z } from 'zod';
import { LINE_OPERATIONS, type LineOperationKind } from '../../adapters/adapter';
import { toMinor } from '../../db/knex';
import { DateTimeSchema } from '../../wire';
import type { LineStatus, LineStop } from './state';
import { dateOnly } from '../../dates';

/** Where an operation asked of a line stands. */
export const LINE_OPERATION_STATUSES = ['requested', 'in-flight', 'applied', 'refused', 'reconciliation-required'] as const;
export type LineOperationStatus = (typeof LINE_OPERATION_STATUSES)[number];

export interface LineOperationRow {
  id: string;
  advertiser_id: string;
  booking_id: string;
  line_id: string;
  kind: LineOperationKind;
  status: LineOperationStatus;
  /** The line's status when the operation was asked for: where a refusal returns it. */
  from_status: LineStatus;
  /** The line's `stop` before a pause or stop was asked for: what a refusal restores. */
  stop_before: LineStop | null;
  budget_from_minor: string | null;
  budget_to_minor: string | null;
  end_date_to: string | Date | null;
  amendment_id: string | null;
  attempt_id: string | null;
  note: string | null;
  reason: string | null;
  requested_by: string;
  created_at: Date;
  settled_at: Date | null;
}

/**
 * The line's pending operation, as one JSON value to read with the line's lock (SQL over `l`, the
 * line): every path that changes an operation holds its line's lock first, so it stays as read.
 */
export const PENDING_OPERATION_SQL = '(select row_to_json(o) from line_operations o where o.id = l.operation_id)';

/**
 * The id of the line's latest booking attempt (SQL over `line`, a line row's alias): the
 * supplier's reference for the buy an operation changes. By `line_id`, which every line attempt
 * carries and which is indexed: by subject id it would read every attempt ever made.
 */
export const latestBookAttemptSql = (line: string) =>
  `(select a.id from supplier_attempts a where a.line_id = ${line}.id and a.subject_kind = 'line'
       and a.operation = 'book' order by a.created_at desc limit 1)`;

/** An operation as read with its line (`PENDING_OPERATION_SQL`): figures come back as numbers, times as text. */
export type HeldOperation = Omit<LineOperationRow, 'budget_from_minor' | 'budget_to_minor' | 'created_at' | 'settled_at'> & {
  budget_from_minor: string | number | null;
  budget_to_minor: string | number | null;
};

/** The operation, locked: it is read and changed under its line's lock, which the caller holds. */
export async function lockLineOperation(trx: Knex, id: string): Promise<LineOperationRow | undefined> {
  return (await trx('line_operations').where({ id }).forUpdate().first()) as LineOperationRow | undefined;
}

/** The operation's new status (with its attempt, or the reason it was refused or is in doubt), as an UPDATE to run or embed. */
export function markLineOperation(
  trx: Knex,
  id: string,
  status: LineOperationStatus,
  more: { attemptId?: string | null; reason?: string | null } = {},
) {
  const settled = status === 'applied' || status === 'refused';
  return trx('line_operations')
    .where({ id })
    .update({
      status,
      ...(more.attemptId !== undefined ? { attempt_id: more.attemptId } : {}),
      ...(more.reason !== undefined ? { reason: more.reason } : {}),
      settled_at: settled ? trx.fn.now() : null,
    });
}

export const LineOperationSchema = z
  .object({
    id: z.uuid(),
    lineId: z.uuid(),
    kind: z.enum(LINE_OPERATIONS),
    status: z.enum(LINE_OPERATION_STATUSES),
    budgetFromMinor: z.number().int().min(0).nullable(),
    budgetToMinor: z.number().int().min(0).nullable(),
    endDateTo: z.string().nullable(),
    attemptId: z.string().nullable(),
    note: z.string().nullable(),
    reason: z.string().nullable().describe("The supplier's or a person's reason, when it was refused or is in doubt."),
    requestedBy: z.string(),
    requestedAt: DateTimeSchema,
    settledAt: DateTimeSchema.nullable(),
  })
  .meta({ id: 'LineOperation' });
export type LineOperationView = z.infer<typeof LineOperationSchema>;

export function lineOperationView(r: LineOperationRow): LineOperationView {
  return {
    id: r.id,
    lineId: r.line_id,
    kind: r.kind,
    status: r.status,
    budgetFromMinor: r.budget_from_minor === null ? null : toMinor(r.budget_from_minor),
    budgetToMinor: r.budget_to_minor === null ? null : toMinor(r.budget_to_minor),
    endDateTo: r.end_date_to === null ? null : dateOnly(r.end_date_to),
    attemptId: r.attempt_id,
    note: r.note,
    reason: r.reason,
    requestedBy: r.requested_by,
    requestedAt: r.created_at.toISOString(),
    settledAt: r.settled_at ? r.settled_at.toISOString() : null,
  };
}

/** Each line's pending operation (pause, resume, stop or budget change) of a booking, by line id: what it is and where it stands. */
export async function pendingOperationsOf(db: Knex, bookingId: string): Promise<Map<string, LineOperationView>> {
  const rows = (await db('line_operations as o')
    .join('booking_lines as l', 'l.operation_id', 'o.id')
    .where('l.booking_id', bookingId)
    .select('o.*')) as LineOperationRow[];
  return new Map(rows.map((r) => [r.line_id, lineOperationView(r)]));
}
