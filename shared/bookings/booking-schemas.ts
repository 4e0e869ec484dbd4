import { z } from 'zod';
import { BookingStateSchema, LineStateSchema } from './derived-state';
import { DateTimeSchema } from '../wire';
import { ChannelSchema } from '../auth/products';
import { BOOKING_STATUSES } from './booking-status';
import { LINE_STATUSES } from './lines/state';
import { LINE_OPERATIONS } from '../adapters/adapter';

/** Why a stopped line is stopped: `pause` may resume, `end` never runs again, `staged` may be enabled once its evidence allows. */
export const LineStopSchema = z
  .object({
    kind: z.enum(['pause', 'end', 'staged']),
    requestedAt: DateTimeSchema.optional(),
    by: z.string().optional(),
    note: z.string().optional(),
  })
  .meta({ id: 'LineStop' });

const DateTime = DateTimeSchema;

export const CreativeReferenceSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  format: z.string().min(1),
  assetUrl: z.string(),
  assetFingerprint: z.string().regex(/^sha256:[a-f0-9]{64}$/),
});

/** One supplier call (or a staff member's managed booking) for a line, as the attempt ledger keeps it. */
export const SupplierAttemptSchema = z
  .object({
    id: z.string().min(1),
    operation: z.string().min(1),
    status: z.string().min(1),
    providerReference: z.string().nullable(),
    createdAt: DateTime,
    finishedAt: DateTime.nullable(),
    lateOutcome: z.unknown().nullable(),
    lateOutcomeAt: DateTime.nullable(),
    drift: z.array(z.string()).nullable(),
  })
  .meta({ id: 'SupplierAttempt' });

/** Whether the latest pause, stop or budget or end-date change the supplier acknowledged is proven by what it said since. */
export const LineVerificationSchema = z
  .object({
    operationId: z.uuid(),
    operation: z.enum(['pause', 'stop', 'change-budget']),
    state: z.enum(['pending', 'verified', 'failed', 'superseded']),
    effectiveAt: DateTime,
    decidedAt: DateTime.nullable(),
    evidence: z.record(z.string(), z.unknown()).nullable(),
    /** What a person must still do at the supplier (a seller that does not carry out cancels: end the buy there). */
    followUp: z.string().nullable(),
    /** Staff recorded the follow-up done (their evidence is on the booking's events). */
    followUpDone: z.object({ at: DateTime, by: z.string() }).nullable(),
  })
  .meta({ id: 'LineVerification' });
export type LineVerification = z.infer<typeof LineVerificationSchema>;

export const BookingLineSchema = z
  .looseObject({
    id: z.string().min(1),
    channelCampaignId: z.string().min(1),
    adapterKey: z.string().min(1),
    channel: ChannelSchema,
    budgetMinor: z.number().int().min(0),
    /** Beyond the spec: the most the line may spend on one UTC day, enforced by pausing it (docs/delivery.md, Daily caps). */
    dailyCapMinor: z.number().int().nullable(),
    executionMode: z.enum(['sandbox', 'live']),
    version: z.number().int().min(0),
    status: z.enum(LINE_STATUSES),
    /** Beside the spec's status: what a person would say the line is doing. */
    state: LineStateSchema,
    executionMethod: z.enum(['manual', 'computer-use']).nullable(),
    providerReference: z.string().nullable(),
    evidence: z.string().nullable(),
    claimedBy: z.string().nullable(),
    assignedToUserId: z.uuid().nullable(),
    assignedAt: DateTime.nullable(),
    startedAt: DateTime.nullable(),
    confirmedAt: DateTime.nullable(),
    providerAttemptId: z.string().min(1).nullable(),
    creatives: z.array(CreativeReferenceSchema),
    // Beyond the spec's fields: every attempt, with a supplier's late answer kept as evidence.
    attempts: z.array(SupplierAttemptSchema),
    stop: LineStopSchema.nullable(),
    pendingOperation: z.enum(['book', ...LINE_OPERATIONS]).nullable(),
    verification: LineVerificationSchema.nullable(),
  })
  .meta({ id: 'BookingLine' });
export type BookingLine = z.infer<typeof BookingLineSchema>;

export const BookingEventSchema = z
  .object({
    id: z.string().min(1),
    bookingId: z.string().min(1),
    lineId: z.string().min(1).nullable(),
    action: z.string().min(1),
    actorId: z.string().min(1),
    actor: z.enum(['human', 'agent', 'system']),
    source: z.enum(['dev', 'web', 'mcp', 'system']),
    detail: z.unknown().optional(),
    createdAt: DateTime,
  })
  .meta({ id: 'BookingEvent' });
export type BookingEvent = z.infer<typeof BookingEventSchema>;

export const BookingSchema = z
  .looseObject({
    id: z.string().min(1),
    advertiserId: z.string().min(1),
    campaignId: z.string().min(1),
    campaignName: z.string(),
    client: z.strictObject({ id: z.string().min(1), name: z.string() }),
    campaignStatus: z.string().min(1),
    closeoutPending: z.boolean(),
    flightEnded: z.boolean(),
    overdue: z.boolean(),
    version: z.number().int().min(0),
    status: z.enum(BOOKING_STATUSES),
    /** Beside the spec's status: what a person would say the booking is doing. */
    state: BookingStateSchema,
    submittedAt: DateTime,
    confirmationDueAt: DateTime,
    startDate: z.string(),
    endDate: z.string(),
    executionMode: z.enum(['sandbox', 'live']),
    mediaBudgetMinor: z.number().int().min(0),
    maximumCommitmentMinor: z.number().int().min(0),
    currency: z.literal('GBP'),
    snapshotDigest: z.string().regex(/^[a-f0-9]{64}$/),
    approvedSnapshot: z.unknown().optional(),
    lines: z.array(BookingLineSchema),
    events: z.array(BookingEventSchema),
  })
  .meta({ id: 'Booking' });
export type Booking = z.infer<typeof BookingSchema>;

/** `{ booking }`, with no other keys (spec 12). */
export const BookingEnvelope = z.strictObject({ booking: BookingSchema }).meta({ id: 'BookingEnvelope' });
