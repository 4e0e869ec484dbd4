import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { rawPrepared } from '../db/knex';
import { conflict, notFound, unprocessable } from '../errors';
import type { Principal } from '../auth/principal';
import type { Actor } from '../auth/actor';
import { findAdapter } from '../adapters/catalogue';
import { requireSellerAccount, requireSupplierAccess } from '../adapters/credentials';
import { campaignStatusUpdate, findCampaign } from '../campaigns/campaign-store';
import { findPlanForCampaign } from '../plans/plan-store';
import { checkCreativeEvidence } from '../creatives/creative-approvals';
import { outboxInsert } from '../outbox/outbox';
import type { JobMessage } from '../queues/jobs';
import { bookLineMessage } from '../queues/jobs';
import { reserveCommitment } from '../wallet/wallet';
import { eventRow, type EventInput } from './booking-events';
import { OPERATIONS } from './lines/operations';
import type { Booking } from './booking-schemas';
import { bookingFromRows, findBookingById, type BookingRow, type LineRow } from './booking-store';
import { BOOKING_CLOSED_SQL, campaignBooked } from '../campaigns/open-booking';
import { refuseEndedFlight } from '../campaigns/flight';
import { assertMayLaunch } from '../auth/spend-authority';

export interface LaunchOptions {
  confirmationSlaHours: number;
}

export interface LaunchResult {
  booking: Booking;
  /** False when this approved snapshot was already launched: the first booking is returned. */
  created: boolean;
  /** The supplier operations this launch wrote to the outbox, for the request to relay after commit. */
  queued: JobMessage[];
}

/** Over the plan row `p`: its campaign's bookings of its approved snapshot, and any still open. */
const HELD_BOOKINGS = {
  sql: `select coalesce(json_agg(json_build_object('id', b.id, 'status', b.status, 'snapshot_digest', b.snapshot_digest)), '[]'::json)
          from bookings b where b.campaign_id = p.campaign_id and (b.snapshot_digest = p.approved_digest or not ${BOOKING_CLOSED_SQL})`,
  bindings: [],
};

/** Live lines need approved supplier access; sandbox lines need none. */
async function checkSupplierAccess(trx: Knex, advertiserId: string, mode: 'sandbox' | 'live', adapterKeys: string[]): Promise<void> {
  for (const key of new Set(adapterKeys)) {
    const adapter = findAdapter(key);
    if (!adapter || !adapter.modes.includes(mode)) {
      throw unprocessable(`Adapter ${key} cannot execute in ${mode} mode.`, 'adapter_mode_unsupported');
    }
    if (adapter.kind === 'adcp') await requireSellerAccount(trx, key, advertiserId);
    else if (mode === 'live' && adapter.requiresCredential) await requireSupplierAccess(trx, key, advertiserId, 'Live buying');
  }
}

/**
 * Launches a campaign's approved plan: one booking per approved snapshot, one line per plan
 * line, and one supplier operation per line queued through the outbox, all in one transaction.
 */
export async function launchCampaign(db: Knex, p: Principal, actor: Actor, campaignId: string, opts: LaunchOptions): Promise<LaunchResult> {
  assertMayLaunch(p);
  return db.transaction(async (trx) => {
    // The campaign row lock serialises launches of one campaign.
    const campaign = await findCampaign(trx, p, campaignId, { forUpdate: true });
    if (!campaign) throw notFound();
    // Read with the plan: the campaign's bookings that a launch of its approved snapshot would
    // meet (that snapshot's own, and any other still open).
    const stored = await findPlanForCampaign(trx, p, campaign, { readWith: HELD_BOOKINGS });
    if (!stored || stored.plan.status !== 'approved' || !stored.plan.approvedDigest || !stored.approvedSnapshot) {
      throw conflict('The campaign has no approved plan. Approve the plan before launching.', 'plan_not_approved');
    }
    const digest = stored.plan.approvedDigest;
    // Read with the plan: whether the campaign and plan as they stand (creatives at their current versions) still have the approved digest.
    if (!stored.plan.approvalCurrent) {
      throw conflict('The campaign or plan changed after approval. Approve it again before launching.', 'snapshot_changed');
    }

    // A repeat launch of the same approved snapshot is the same booking; a different one cannot open a second.
    const held = stored.read as Array<{ id: string; status: string; snapshot_digest: string }>;
    const existing = held.find((b) => b.snapshot_digest === digest);
    if (existing) return { booking: (await findBookingById(trx, existing.id))!, created: false, queued: [] };
    if (held[0]) throw campaignBooked(held[0]);
    await refuseEndedFlight(trx, campaign);

    const mode = campaign.executionMode;
    await checkSupplierAccess(
      trx,
      p.advertiserId,
      mode,
      stored.plan.lines.map((l) => l.adapterKey),
    );

    // The lines book exactly the creative versions that were approved into the plan.
    const approvedLines = stored.approvedSnapshot.plan.lines;
    if (mode === 'live') await checkCreativeEvidence(trx, approvedLines);

    const bookingId = randomUUID();
    const submittedAt = new Date();
    const booking = {
      id: bookingId,
      advertiser_id: p.advertiserId,
      campaign_id: campaign.id,
      plan_id: stored.plan.id,
      status: 'queued' as const,
      execution_mode: mode,
      snapshot_digest: digest,
      media_budget_minor: String(campaign.budgetMinor),
      maximum_commitment_minor: String(campaign.maximumCommitmentMinor),
      submitted_at: submittedAt,
      confirmation_due_at: new Date(submittedAt.getTime() + opts.confirmationSlaHours * 3600_000),
    };
    const bookingInsert = trx('bookings')
      .insert({
        ...booking,
        line_counts: JSON.stringify({ queued: stored.plan.lines.length }),
        approved_snapshot: JSON.stringify(stored.approvedSnapshot),
        launched_by: actor.actorId,
      })
      .returning(['version', 'closed_out_at'])
      .toSQL();

    const lines = stored.plan.lines.map((l, position) => ({
      id: randomUUID(),
      booking_id: bookingId,
      advertiser_id: p.advertiserId,
      plan_line_id: l.id,
      position,
      channel_campaign_id: `cc-${randomUUID()}`,
      adapter_key: l.adapterKey,
      channel: l.channel,
      budget_minor: l.budgetMinor,
      daily_cap_minor: l.dailyCapMinor ?? null,
      execution_mode: mode,
      status: 'queued',
      execution_method: findAdapter(l.adapterKey)?.executionMethod ?? null,
      creatives: JSON.stringify(approvedLines[position]?.creatives ?? []),
      // The product and price the approved snapshot names (the plan's lines are the snapshot's).
      supplier_product: l.supplierProduct ? JSON.stringify(l.supplierProduct) : null,
    }));
    const eventInputs: EventInput[] = [
      {
        bookingId,
        action: 'booking.launched',
        actor,
        detail: {
          snapshotDigest: digest,
          executionMode: mode,
          lines: lines.length,
          reservedMinor: mode === 'live' ? campaign.maximumCommitmentMinor : 0,
        },
      },
      ...lines.map((l) => ({
        bookingId,
        lineId: l.id,
        action: OPERATIONS.book.events.requested,
        actor,
        detail: { adapterKey: l.adapter_key, channel: l.channel },
      })),
    ];
    const eventRows = eventInputs.map(eventRow);
    const queued = lines.map((l) => bookLineMessage(l.adapter_key, { bookingId, lineId: l.id }));
    // The booking, its lines, their events, their supplier operations in the outbox and the
    // campaign's new status, in one statement: prepared, as its text is the same for every
    // launch of as many lines. The lines' foreign keys are checked at its end, booking written.
    const lineInsert = trx('booking_lines').insert(lines).returning('*').toSQL();
    const companionWrites = [
      trx('booking_events').insert(eventRows).toSQL(),
      outboxInsert(trx, queued).toSQL(),
      campaignStatusUpdate(trx, campaign.id, 'booked').toSQL(),
    ];
    const rows = await rawPrepared<LineRow & { launched_at: Date; booking_version: number; booking_closed_out_at: Date | null }>(
      trx,
      `with booked as (${bookingInsert.sql}), inserted as (${lineInsert.sql}),
         ${companionWrites.map((w, i) => `companion_${i} as (${w.sql})`).join(', ')}
       select inserted.*, now() as launched_at, booked.version as booking_version, booked.closed_out_at as booking_closed_out_at
         from inserted cross join booked`,
      [...bookingInsert.bindings, ...lineInsert.bindings, ...companionWrites.flatMap((w) => w.bindings)],
    );
    // Sandbox execution is funded by nobody; live execution reserves the whole commitment.
    if (mode === 'live') await reserveCommitment(trx, p.advertiserId, bookingId, campaign.maximumCommitmentMinor, actor.actorId);
    const lineRows: LineRow[] = rows.map(({ launched_at: _at, booking_version: _v, booking_closed_out_at: _c, ...line }) => line);
    // The events as stored: stamped, as every row of the transaction, with its start (now()).
    const events = eventRows.map((r, seq) => ({ ...r, detail: eventInputs[seq]!.detail, created_at: rows[0]!.launched_at, seq }));
    // The booking as stored: what was written, with the columns the database filled in.
    const joined: BookingRow = {
      ...booking,
      approved_snapshot: stored.approvedSnapshot,
      version: rows[0]!.booking_version,
      closed_out_at: rows[0]!.booking_closed_out_at,
      campaign_name: campaign.name,
      client_name: campaign.clientName,
      campaign_status: 'booked',
      start_date: campaign.startDate,
      end_date: campaign.endDate,
    };
    return { booking: bookingFromRows(joined, lineRows, events), created: true, queued };
  });
}
