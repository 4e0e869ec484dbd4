import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Actor } from '../auth/actor';
import type { Principal } from '../auth/principal';
import { findAdapter } from '../adapters/catalogue';
import { findCampaign } from '../campaigns/campaign-store';
import { dateOnly } from '../dates';
import { toMinor } from '../db/knex';
import { badRequest, conflict, notFound, unprocessable } from '../errors';
import type { JobMessage } from '../queues/jobs';
import { DateTimeSchema } from '../wire';
import { AMENDMENT_STATUSES } from './amendment-status';
import { lineSpentMinor, reserveBudgetIncrease } from './booking-money';
import type { LineRow } from './booking-store';
import { openBookingOf } from './campaign-control';
import { LineOperationSchema, lineOperationView, type LineOperationRow } from './lines/operation-store';
import { requestOperations } from './lines/request';
import { assertWithinCommitment } from './commitment-limit';
import { figuresAsOf, spendFigures, type SpendFigures } from './spend-figures';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date, YYYY-MM-DD');

/** An amendment's fields, as the REST body and the governed action's parameters both carry them. */
export const AMENDMENT_FIELDS = {
  /** The booking's version as the caller last read it. */
  expectedVersion: z.number().int().min(0),
  lines: z
    .array(z.strictObject({ lineId: z.uuid(), budgetMinor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }))
    .max(100)
    .refine((ls) => new Set(ls.map((l) => l.lineId.toLowerCase())).size === ls.length, 'each line at most once'),
  endDate: Day.optional(),
  note: z.string().trim().min(1).max(2000).optional(),
};
/** An amendment changes something: a line's budget, or the end date. */
export const changesSomething = (b: { lines: unknown[]; endDate?: string }) => b.lines.length > 0 || b.endDate !== undefined;
const CHANGES_SOMETHING = { path: ['lines'], message: 'change at least one line, or the end date' };

export const AmendmentRequestSchema = z
  .strictObject(AMENDMENT_FIELDS)
  .refine(changesSomething, CHANGES_SOMETHING)
  .meta({ id: 'AmendmentRequest' });
export const AmendmentParametersSchema = z
  .strictObject({ campaignId: z.uuid(), ...AMENDMENT_FIELDS })
  .refine(changesSomething, CHANGES_SOMETHING);
export type AmendmentRequest = z.infer<typeof AmendmentRequestSchema>;

export const AmendmentSchema = z
  .object({
    id: z.uuid(),
    bookingId: z.uuid(),
    campaignId: z.uuid(),
    status: z.enum(AMENDMENT_STATUSES),
    endDateFrom: z.string().nullable(),
    endDateTo: z.string().nullable(),
    increaseMinor: z.number().int().min(0).describe('What the amendment held from the wallet for budget increases (live bookings).'),
    note: z.string().nullable(),
    requestedBy: z.string(),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
    lines: z.array(LineOperationSchema),
  })
  .meta({ id: 'Amendment' });
export type Amendment = z.infer<typeof AmendmentSchema>;

interface AmendmentRow {
  id: string;
  booking_id: string;
  campaign_id: string;
  status: Amendment['status'];
  end_date_from: string | null;
  end_date_to: string | null;
  increase_minor: string;
  note: string | null;
  requested_by: string;
  created_at: Date;
  updated_at: Date;
}

const amendmentView = (a: AmendmentRow, lines: LineOperationRow[]): Amendment => ({
  id: a.id,
  bookingId: a.booking_id,
  campaignId: a.campaign_id,
  status: a.status,
  endDateFrom: a.end_date_from ? dateOnly(a.end_date_from) : null,
  endDateTo: a.end_date_to ? dateOnly(a.end_date_to) : null,
  increaseMinor: toMinor(a.increase_minor),
  note: a.note,
  requestedBy: a.requested_by,
  createdAt: a.created_at.toISOString(),
  updatedAt: a.updated_at.toISOString(),
  lines: lines.map(lineOperationView),
});

/** Why an amendment may not change the line now, or null: only a running or paused line, with nothing else in hand. */
export function amendable(line: LineRow): string | null {
  if (line.operation_id) return `a ${line.operation} is already in hand on it`;
  if (line.status === 'confirmed' || (line.status === 'stopped' && line.stop?.kind === 'pause')) return null;
  return `it is ${line.status}${line.stop ? ` (${line.stop.kind})` : ''}; only running or paused lines can be amended`;
}

export interface AmendResult {
  amendment: Amendment;
  queued: JobMessage[];
  /** The spend figures a cut was judged against, and whether they are older than the delivery poll interval. */
  spendFigures: SpendFigures;
}

export interface AmendOptions {
  /** DELIVERY_POLL_EVERY_MS: figures older than this are stale. */
  pollEveryMs: number;
}

/**
 * Changes running lines' budgets (and the flight's end, where every supplier allows it), as one
 * amendment: under the booking's lines and row, at the version the caller read, one
 * `change-budget` operation per changed line, each queued to its supplier through the outbox; a
 * live increase holds its difference from the wallet in the same transaction, or nothing is asked
 * at all. With a new end date, every running line is told it.
 */
export async function amendCampaign(
  db: Knex,
  p: Principal,
  actor: Actor,
  campaignId: string,
  body: AmendmentRequest,
  opts: AmendOptions,
): Promise<AmendResult> {
  return db.transaction(async (trx) => {
    const campaign = (await findCampaign(trx, p, campaignId))!;
    const bookingId = await openBookingOf(trx, p, campaignId);
    const lines = (await trx('booking_lines').where({ booking_id: bookingId }).orderBy('id').forUpdate()) as LineRow[];
    const booking = await trx('bookings')
      .where({ id: bookingId })
      .forNoKeyUpdate()
      .first('version', 'execution_mode', 'advertiser_id', 'maximum_commitment_minor');
    if (booking.version !== body.expectedVersion) {
      throw conflict(
        `The booking is at version ${booking.version}, not ${body.expectedVersion}. Read it again before amending.`,
        'version_conflict',
      );
    }
    const byId = new Map(lines.map((l) => [l.id, l]));
    const asked = body.lines.map((l, i) => {
      const line = byId.get(l.lineId.toLowerCase());
      if (!line)
        throw badRequest(
          'No such line in this booking.',
          [{ path: `lines.${i}.lineId`, message: 'not a line of the booking' }],
          'unknown_line',
        );
      return { line, budgetMinor: l.budgetMinor, index: i };
    });
    if (body.endDate !== undefined) {
      const today = new Date().toISOString().slice(0, 10);
      if (body.endDate < campaign.startDate || body.endDate < today) {
        throw badRequest('The new end date must be today or later, and not before the flight starts.', [
          { path: 'endDate', message: `on or after ${campaign.startDate > today ? campaign.startDate : today}` },
        ]);
      }
      // Every running line is told the new end, at its budget unless the amendment changes it.
      for (const line of [...lines].sort((a, b) => a.position - b.position)) {
        if (!asked.some((a) => a.line.id === line.id) && amendable(line) === null) {
          asked.push({ line, budgetMinor: toMinor(line.budget_minor), index: -1 });
        }
      }
    }
    const changes = asked.filter((a) => body.endDate !== undefined || a.budgetMinor !== toMinor(a.line.budget_minor));
    if (!changes.length)
      throw badRequest('Nothing would change: every budget named is already the line’s.', undefined, 'nothing_to_change');

    const figures = await spendFigures(trx, lines, opts.pollEveryMs);
    for (const { line, budgetMinor, index } of changes) {
      const at = index >= 0 ? `lines.${index}` : `line ${line.id}`;
      const refusal = amendable(line);
      if (refusal) throw conflict(`Line ${line.id} cannot be amended: ${refusal}.`, 'invalid_transition', 'terminal');
      const spent = await lineSpentMinor(trx, line);
      if (budgetMinor < spent) {
        throw conflict(
          `Line ${line.id} has already spent ${spent}${figuresAsOf(figures, line.id)}; its budget cannot go below that (${at}).`,
          'budget_below_spend',
        );
      }
      if (body.endDate !== undefined && !findAdapter(line.adapter_key)?.endDateChanges) {
        throw unprocessable(
          `The supplier of line ${line.id} (${line.adapter_key}) cannot move a running line's end date.`,
          'end_date_unsupported',
        );
      }
    }

    // No amendment takes the lines past the campaign's maximum commitment; nothing is written when it would.
    await assertWithinCommitment(
      trx,
      lines,
      new Map(changes.map((c) => [c.line.id, c.budgetMinor])),
      toMinor(booking.maximum_commitment_minor),
      'This amendment',
    );

    const increases = changes.map((c) => Math.max(0, c.budgetMinor - toMinor(c.line.budget_minor)));
    const increaseMinor = booking.execution_mode === 'live' ? increases.reduce((a, b) => a + b, 0) : 0;
    const amendmentId = randomUUID();
    const [row] = (await trx('booking_amendments')
      .insert({
        id: amendmentId,
        advertiser_id: p.advertiserId,
        booking_id: bookingId,
        campaign_id: campaign.id,
        status: 'in-flight',
        end_date_from: body.endDate !== undefined ? campaign.endDate : null,
        end_date_to: body.endDate ?? null,
        increase_minor: increaseMinor,
        note: body.note ?? null,
        requested_by: actor.actorId,
      })
      .returning('*')) as AmendmentRow[];

    const requested = await requestOperations(
      trx,
      bookingId,
      changes.map(({ line, budgetMinor }) => {
        const figures = { budgetFromMinor: toMinor(line.budget_minor), budgetToMinor: budgetMinor, endDateTo: body.endDate };
        return { line, kind: 'change-budget', amendmentId, note: body.note, ...figures, detail: { amendmentId, ...figures } };
      }),
      actor,
    );
    if (booking.execution_mode === 'live') {
      for (const [i, { operationId }] of requested.entries()) {
        const increaseMinor = increases[i]!;
        await reserveBudgetIncrease(trx, { id: operationId, advertiserId: p.advertiserId, bookingId, increaseMinor }, actor.actorId);
      }
    }
    const queued = requested.map((r) => r.message);
    const operations = (await trx('line_operations').where({ amendment_id: amendmentId })) as LineOperationRow[];
    return {
      amendment: amendmentView(
        row!,
        orderLike(
          operations,
          changes.map((c) => c.line.id),
        ),
      ),
      queued,
      spendFigures: figures,
    };
  });
}

const orderLike = (ops: LineOperationRow[], lineIds: string[]) =>
  [...ops].sort((a, b) => lineIds.indexOf(a.line_id) - lineIds.indexOf(b.line_id));

/** The campaign's amendments, newest first, each with its lines' changes and where they stand. */
export async function listAmendments(db: Knex, p: Principal, campaignId: string): Promise<Amendment[]> {
  const campaign = await findCampaign(db, p, campaignId);
  if (!campaign) throw notFound();
  const rows = (await db('booking_amendments')
    .where({ campaign_id: campaign.id, advertiser_id: p.advertiserId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])) as AmendmentRow[];
  if (!rows.length) return [];
  const ops = (await db('line_operations')
    .whereIn(
      'amendment_id',
      rows.map((r) => r.id),
    )
    .orderBy(['created_at', 'id'])) as LineOperationRow[];
  return rows.map((r) =>
    amendmentView(
      r,
      ops.filter((o) => o.amendment_id === r.id),
    ),
  );
}

/**
 * The increase an amendment would hold, from the lines as they stand (what an agent's approval
 * covers). An amendment over the campaign's maximum commitment is refused here already, so no
 * one is asked to approve what execution would refuse; execution checks again under the locks.
 */
export async function amendmentIncrease(db: Knex, p: Principal, campaignId: string, body: Pick<AmendmentRequest, 'lines'>) {
  const campaign = await findCampaign(db, p, campaignId);
  if (!campaign) throw notFound();
  const bookingId = await openBookingOf(db, p, campaignId);
  const lines = (await db('booking_lines').where({ booking_id: bookingId }).orderBy('id')) as LineRow[];
  const booking = await db('bookings').where({ id: bookingId }).first('maximum_commitment_minor');
  const budgets = new Map(lines.map((l) => [l.id, toMinor(l.budget_minor)]));
  const asked = new Map(body.lines.filter((l) => budgets.has(l.lineId.toLowerCase())).map((l) => [l.lineId.toLowerCase(), l.budgetMinor]));
  await assertWithinCommitment(db, lines, asked, toMinor(booking.maximum_commitment_minor), 'This amendment');
  const increaseMinor = [...asked].reduce((sum, [id, budgetMinor]) => sum + Math.max(0, budgetMinor - budgets.get(id)!), 0);
  return { campaign, increaseMinor };
}
