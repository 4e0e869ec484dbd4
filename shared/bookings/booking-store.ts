import type { Knex } from 'knex';
import { firstPrepared, toMinor } from '../db/knex';
import type { Booking, BookingEvent, BookingLine } from './booking-schemas';
import type { BookingStatus } from './booking-status';
import { OPEN_LINE_STATUSES, type LineOperation, type LineStatus, type LineStop } from './lines/state';
import { attemptView, type AttemptRow } from '../suppliers/attempts';
import type { LineVerification } from './booking-schemas';
import { dateOnly } from '../dates';
import { bookingState, flightOf, isOverdue, lineState, type Flight } from './derived-state';

export interface LineRow {
  id: string;
  booking_id: string;
  advertiser_id: string;
  position: number;
  channel_campaign_id: string;
  adapter_key: string;
  channel: BookingLine['channel'];
  budget_minor: string;
  daily_cap_minor: string | null;
  /** The UTC day (on the line's clock) its daily cap paused it; the cap resumes it the next day. */
  cap_paused_on: string | Date | null;
  execution_mode: 'sandbox' | 'live';
  version: number;
  status: LineStatus;
  execution_method: 'manual' | 'computer-use' | null;
  provider_reference: string | null;
  evidence: string | null;
  claimed_by: string | null;
  assigned_to_user_id: string | null;
  assigned_at: Date | null;
  started_at: Date | null;
  confirmed_at: Date | null;
  provider_attempt_id: string | null;
  /** AdCP sellers: the product and pricing option booked. */
  supplier_product: { productId: string; pricingOptionId: string } | null;
  creatives: BookingLine['creatives'];
  workflow_steps: unknown;
  enableable: boolean;
  operation: LineOperation;
  /** The line operation still pending, if any (`line_operations`). */
  operation_id: string | null;
  stop: LineStop | null;
}

export interface BookingRow {
  id: string;
  advertiser_id: string;
  campaign_id: string;
  plan_id: string;
  status: BookingStatus;
  version: number;
  execution_mode: 'sandbox' | 'live';
  snapshot_digest: string;
  approved_snapshot: unknown;
  media_budget_minor: string;
  maximum_commitment_minor: string;
  submitted_at: Date;
  confirmation_due_at: Date;
  closed_out_at: Date | null;
  // joined from campaigns
  campaign_name: string;
  client_name: string;
  campaign_status: string;
  start_date: string | Date;
  end_date: string | Date;
  /** The workspace's sandbox clock (days ahead of real time), joined; sandbox bookings run on it. */
  clock_offset_days?: number | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toLine(r: LineRow, attempts: AttemptRow[], flight: Flight, verification: LineVerification | null = null): BookingLine {
  return {
    state: lineState(r, flight),
    id: r.id,
    channelCampaignId: r.channel_campaign_id,
    adapterKey: r.adapter_key,
    channel: r.channel,
    budgetMinor: toMinor(r.budget_minor),
    dailyCapMinor: r.daily_cap_minor === null || r.daily_cap_minor === undefined ? null : toMinor(r.daily_cap_minor),
    executionMode: r.execution_mode,
    version: r.version,
    status: r.status,
    executionMethod: r.execution_method,
    providerReference: r.provider_reference,
    evidence: r.evidence,
    claimedBy: r.claimed_by,
    assignedToUserId: r.assigned_to_user_id,
    assignedAt: iso(r.assigned_at),
    startedAt: iso(r.started_at),
    confirmedAt: iso(r.confirmed_at),
    providerAttemptId: r.provider_attempt_id,
    creatives: r.creatives,
    // Beyond the spec's fields: what staff need to work a workflow line, and whether a staged line may be enabled.
    workflowSteps: r.workflow_steps ?? null,
    enableable: r.enableable,
    // Why a stopped line is stopped (and whether it may resume), and the supplier operation in hand.
    stop: r.stop ?? null,
    pendingOperation: r.operation_id || (r.operation === 'book' && OPEN_LINE_STATUSES.includes(r.status)) ? r.operation : null,
    attempts: attempts.map(attemptView),
    verification,
  };
}

function toEvent(r: Record<string, unknown>): BookingEvent {
  return {
    id: r.id as string,
    bookingId: r.booking_id as string,
    lineId: (r.line_id as string | null) ?? null,
    action: r.action as string,
    actorId: r.actor_id as string,
    actor: r.actor as BookingEvent['actor'],
    source: r.source as BookingEvent['source'],
    ...(r.detail === null || r.detail === undefined ? {} : { detail: r.detail }),
    createdAt: (r.created_at as Date).toISOString(),
  };
}

function toBooking(
  r: BookingRow,
  lines: LineRow[],
  attempts: AttemptRow[],
  events: Record<string, unknown>[],
  now: Date,
  verifications: ReadonlyMap<string, LineVerification> = new Map(),
): Booking {
  const endDate = dateOnly(r.end_date);
  const flight = flightOf(r, now);
  const flightEnded = flight.ended;
  const views = lines.map((l) =>
    toLine(
      l,
      attempts.filter((a) => a.line_id === l.id),
      flight,
      verifications.get(l.id) ?? null,
    ),
  );
  const overdue = isOverdue(r.status, r.confirmation_due_at, now);
  return {
    id: r.id,
    advertiserId: r.advertiser_id,
    campaignId: r.campaign_id,
    campaignName: r.campaign_name,
    client: { id: r.advertiser_id, name: r.client_name },
    campaignStatus: r.campaign_status,
    // Something ran (a line was confirmed at some point) and its money is not yet settled.
    closeoutPending: flightEnded && r.closed_out_at === null && lines.some((l) => l.confirmed_at !== null),
    flightEnded,
    overdue,
    version: r.version,
    status: r.status,
    state: bookingState(
      views.map((l) => l.state),
      { overdue, flightEnded },
    ),
    submittedAt: r.submitted_at.toISOString(),
    confirmationDueAt: r.confirmation_due_at.toISOString(),
    startDate: dateOnly(r.start_date),
    endDate,
    executionMode: r.execution_mode,
    mediaBudgetMinor: toMinor(r.media_budget_minor),
    maximumCommitmentMinor: toMinor(r.maximum_commitment_minor),
    currency: 'GBP',
    snapshotDigest: r.snapshot_digest,
    approvedSnapshot: r.approved_snapshot,
    lines: views,
    events: events.map(toEvent),
  };
}

/** A booking from rows just written (a launch): the same view a read gives, without reading them back. */
export function bookingFromRows(row: BookingRow, lines: LineRow[], events: Array<Record<string, unknown>>): Booking {
  const bySeq = [...events].sort((a, b) => Number(a.seq) - Number(b.seq));
  return toBooking(
    row,
    [...lines].sort((a, b) => a.position - b.position),
    [],
    bySeq,
    new Date(),
  );
}

export function bookingQuery(db: Knex) {
  return db('bookings as b')
    .join('campaigns as c', 'c.id', 'b.campaign_id')
    .leftJoin('sandbox_clocks as sc', 'sc.advertiser_id', 'b.advertiser_id')
    .select(
      'b.*',
      'c.name as campaign_name',
      'c.client_name',
      'c.status as campaign_status',
      'c.start_date',
      'c.end_date',
      'sc.offset_days as clock_offset_days',
    );
}

/** SQL: what operation `o` left a person to do at the supplier (from its attempt), or null (docs/bookings.md). */
export const FOLLOW_UP_SQL = `(select a.detail -> 'detail' ->> 'followUp' from supplier_attempts a where a.id = o.attempt_id)`;

/**
 * Each line's latest change that is verified by delivery (docs/bookings.md, "Verified control"),
 * for the bookings `where` names (a condition on `o`, the operation): one query for both readers.
 */
const VERIFICATIONS_SQL = (where: string) => `select distinct on (o.line_id) o.line_id, o.id, o.kind, o.verification, o.effective_at,
         o.verification_decided_at, o.verification_evidence, o.follow_up_done_at, o.follow_up_done_by,
         ${FOLLOW_UP_SQL} as follow_up
    from line_operations o where ${where} and o.verification is not null
   order by o.line_id, o.effective_at desc`;

interface VerificationRow {
  line_id: string;
  id: string;
  kind: LineVerification['operation'];
  verification: LineVerification['state'];
  effective_at: Date | string;
  verification_decided_at: Date | string | null;
  verification_evidence: Record<string, unknown> | null;
  follow_up: string | null;
  follow_up_done_at: Date | string | null;
  follow_up_done_by: string | null;
}

const isoOf = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function verificationsByLine(rows: VerificationRow[]): Map<string, LineVerification> {
  return new Map(
    rows.map((v) => [
      v.line_id,
      {
        operationId: v.id,
        operation: v.kind,
        state: v.verification,
        effectiveAt: isoOf(v.effective_at)!,
        decidedAt: isoOf(v.verification_decided_at),
        evidence: v.verification_evidence,
        followUp: v.follow_up,
        followUpDone: v.follow_up_done_at ? { at: isoOf(v.follow_up_done_at)!, by: v.follow_up_done_by! } : null,
      },
    ]),
  );
}

/** Loads bookings with their lines and events, in the order of the ids given. */
export async function loadBookings(db: Knex, rows: BookingRow[], now = new Date()): Promise<Booking[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  // Sequential on purpose: callers may pass a transaction, which is one connection.
  const lines = await db<LineRow>('booking_lines').whereIn('booking_id', ids).orderBy(['booking_id', 'position']);
  const attempts = (await db<AttemptRow>('supplier_attempts')
    .where('subject_kind', 'line')
    .whereIn('booking_id', ids)
    .orderBy(['created_at', 'id'])) as AttemptRow[];
  const events = await db('booking_events').whereIn('booking_id', ids).orderBy('seq');
  const { rows: verified } = await db.raw<{ rows: VerificationRow[] }>(VERIFICATIONS_SQL('o.booking_id = any(?::uuid[])'), [ids]);
  const verifications = verificationsByLine(verified);
  return rows.map((r) =>
    toBooking(
      r,
      (lines as LineRow[]).filter((l) => l.booking_id === r.id),
      attempts.filter((a) => a.booking_id === r.id),
      events.filter((e) => e.booking_id === r.id),
      now,
      verifications,
    ),
  );
}

/**
 * A booking is read in several queries (the booking, its lines, events and attempts); one
 * snapshot for all of them, so a reader never sees a booking status its lines contradict.
 */
const inOneSnapshot = <T>(db: Knex, read: (q: Knex) => Promise<T>): Promise<T> =>
  db.isTransaction ? read(db) : db.transaction((trx) => read(trx), { isolationLevel: 'repeatable read', readOnly: true });

/** Timestamps of rows read as JSON (`json_agg`) come back as text: the columns each view reads as dates. */
const reviveDates = <T>(rows: Array<Record<string, unknown>>, columns: readonly string[]): T[] => {
  for (const r of rows) for (const c of columns) if (typeof r[c] === 'string') r[c] = new Date(r[c] as string);
  return rows as T[];
};

// The booking with its lines, line attempts and events in one statement: one round trip, and
// one snapshot (a statement sees one), so its status never contradicts its lines.
const ONE_BOOKING_SQL = (q: Knex) =>
  bookingQuery(q).select(
    q.raw(`(select coalesce(json_agg(l order by l.position), '[]') from booking_lines l where l.booking_id = b.id) as lines_json`),
    q.raw(`(select coalesce(json_agg(a order by a.created_at, a.id), '[]') from supplier_attempts a
             where a.subject_kind = 'line' and a.booking_id = b.id) as attempts_json`),
    q.raw(`(select coalesce(json_agg(e order by e.seq), '[]') from booking_events e where e.booking_id = b.id) as events_json`),
    q.raw(`(select coalesce(json_agg(v), '[]') from (${VERIFICATIONS_SQL('o.booking_id = b.id')}) v) as verifications_json`),
  );

type OneBookingRow = BookingRow & {
  lines_json: Array<Record<string, unknown>>;
  attempts_json: Array<Record<string, unknown>>;
  events_json: Array<Record<string, unknown>>;
  verifications_json: VerificationRow[];
};

function oneBooking(row: OneBookingRow): Booking {
  const { lines_json, attempts_json, events_json, verifications_json, ...booking } = row;
  return toBooking(
    booking,
    reviveDates<LineRow>(lines_json, ['assigned_at', 'started_at', 'confirmed_at']),
    reviveDates<AttemptRow>(attempts_json, ['created_at', 'finished_at', 'late_outcome_at']),
    reviveDates(events_json, ['created_at']),
    new Date(),
    verificationsByLine(verifications_json),
  );
}

export async function findBookingById(db: Knex, id: string, advertiserId?: string): Promise<Booking | null> {
  const query = ONE_BOOKING_SQL(db).where('b.id', id);
  if (advertiserId) query.andWhere('b.advertiser_id', advertiserId);
  const row = await firstPrepared<OneBookingRow>(db, query);
  return row ? oneBooking(row) : null;
}

/**
 * A workspace's booking with its campaign's channels, read together: what a caller's read of a
 * booking needs to decide whether the campaign is within its product, in one round trip.
 */
export async function findBookingWithCampaignChannels(
  db: Knex,
  id: string,
  advertiserId: string,
): Promise<{ booking: Booking; campaignChannels: string[] } | null> {
  // Prepared: polled by agents, and its plan costs PostgreSQL more than running it.
  const row = await firstPrepared<OneBookingRow & { campaign_channels: string[] }>(
    db,
    ONE_BOOKING_SQL(db)
      .select('c.channels as campaign_channels')
      .where({ 'b.id': id, 'b.advertiser_id': advertiserId, 'c.advertiser_id': advertiserId }),
  );
  if (!row) return null;
  const { campaign_channels, ...rest } = row;
  return { booking: oneBooking(rest), campaignChannels: campaign_channels };
}

export function listCampaignBookings(db: Knex, campaignId: string): Promise<Booking[]> {
  return inOneSnapshot(db, async (q) => {
    const rows = (await bookingQuery(q)
      .where('b.campaign_id', campaignId)
      .orderBy([
        { column: 'b.submitted_at', order: 'desc' },
        { column: 'b.id', order: 'desc' },
      ])) as BookingRow[];
    return loadBookings(q, rows);
  });
}
