import { z } from 'zod';
import { DateTimeSchema } from '../wire';
import { ChannelSchema } from '../auth/products';

/** A cohort's life: the sync in flight, then its definite outcome, or a person's resolution of an unknown one. */
export const COHORT_STATES = ['syncing', 'synced', 'rejected', 'needs-resolution', 'discarded'] as const;
export type CohortState = (typeof COHORT_STATES)[number];

/**
 * An attempt is `queued` until a worker commits it `in-flight`, just before the supplier hears of it.
 * `needs-resolution` means the supplier may or may not have acted; only a person moves it on.
 */
export const ATTEMPT_STATUSES = ['queued', 'in-flight', 'synced', 'rejected', 'needs-resolution', 'discarded'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

export const PurposeSchema = z.enum(['inclusion', 'suppression']);

/**
 * Spec 20's body. The fields and defaults are exactly the `audience.sync` action's parameters
 * without campaignId (shared/agent/actions.ts), so an approved action's digest recomputes
 * identically from the real request. The cross-field checks only refuse; they never rewrite.
 */
export const SyncAudienceSchema = z
  .strictObject({
    exposedOn: z.array(ChannelSchema).min(1),
    notExposedOn: z.array(ChannelSchema).default([]),
    channel: ChannelSchema,
    purpose: PurposeSchema,
    adapterKey: z.string().min(1),
    executionMode: z.enum(['sandbox', 'live']),
  })
  .superRefine((b, ctx) => {
    const repeated = (list: readonly string[]) => list.filter((c, i) => list.indexOf(c) !== i);
    for (const key of ['exposedOn', 'notExposedOn'] as const) {
      for (const c of new Set(repeated(b[key]))) {
        ctx.addIssue({ code: 'custom', path: [key], message: `${c} is listed more than once` });
      }
    }
    for (const c of new Set(b.exposedOn.filter((c) => b.notExposedOn.includes(c)))) {
      ctx.addIssue({ code: 'custom', path: ['notExposedOn'], message: `${c} cannot be both exposed and not exposed` });
    }
  })
  .meta({ id: 'SyncAudience' });
export type SyncAudience = z.output<typeof SyncAudienceSchema>;

/** Spec 28: paths are strings 1..100; ids that are not uuids name nothing (404). */
export const AttemptParams = z.strictObject({ cohortId: z.string().min(1).max(100), attemptId: z.string().min(1).max(100) });
export const CohortParams = z.strictObject({ cohortId: z.string().min(1).max(100) });

export const RESOLUTION_OUTCOME = 'discard-unavailable-result';

export const ResolveAttemptSchema = z
  .strictObject({
    expectedRevision: z.number().int().min(1).max(2147483647),
    outcome: z.literal(RESOLUTION_OUTCOME),
    evidenceReference: z
      .string()
      .min(3)
      .max(120)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/),
  })
  .meta({ id: 'ResolveCohortAttempt' });
export type ResolveAttempt = z.output<typeof ResolveAttemptSchema>;

export const CohortDefinitionSchema = z
  .object({
    exposedOn: z.array(ChannelSchema),
    notExposedOn: z.array(ChannelSchema),
    channel: ChannelSchema,
    purpose: PurposeSchema,
    adapterKey: z.string(),
    executionMode: z.enum(['sandbox', 'live']),
  })
  .meta({ id: 'CohortDefinition' });
export type CohortDefinition = z.infer<typeof CohortDefinitionSchema>;

export const AttemptResolutionSchema = z
  .object({ outcome: z.literal(RESOLUTION_OUTCOME), evidenceReference: z.string(), by: z.string(), at: z.string() })
  .meta({ id: 'CohortAttemptResolution' });

export const CohortAttemptSchema = z
  .object({
    id: z.uuid(),
    cohortId: z.uuid(),
    revision: z.number().int(),
    status: z.enum(ATTEMPT_STATUSES),
    providerReference: z.string().nullable(),
    /** What the supplier said (reasons on a rejection), or why the outcome is unknown. */
    detail: z.record(z.string(), z.unknown()).nullable(),
    resolution: AttemptResolutionSchema.nullable(),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
    startedAt: DateTimeSchema.nullable(),
    finishedAt: DateTimeSchema.nullable(),
  })
  .meta({ id: 'CohortSyncAttempt' });
export type CohortAttempt = z.infer<typeof CohortAttemptSchema>;

export const CohortSchema = z
  .object({
    id: z.uuid(),
    advertiserId: z.string(),
    campaignId: z.uuid(),
    definition: CohortDefinitionSchema,
    estimatedSize: z.number().int().min(0),
    revision: z.number().int().min(1),
    state: z.enum(COHORT_STATES),
    createdBy: z.string(),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
    /** Oldest first. */
    attempts: z.array(CohortAttemptSchema),
  })
  .meta({ id: 'IdentityCohort' });
export type Cohort = z.infer<typeof CohortSchema>;
