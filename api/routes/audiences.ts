import { z } from 'zod';
import { requireHuman } from '../http/guards';
import { notFound } from '../../shared/errors';
import { actorOf } from '../../shared/auth/actor';
import { findCampaign } from '../../shared/campaigns/campaign-store';
import { relayAfterCommit } from '../../shared/outbox/outbox';
import {
  AttemptParams,
  CohortAttemptSchema,
  CohortParams,
  CohortSchema,
  ResolveAttemptSchema,
  SyncAudienceSchema,
} from '../../shared/audiences/cohort-schemas';
import { findCohort, listCampaignCohorts } from '../../shared/audiences/cohort-store';
import { requestAudienceSync } from '../../shared/audiences/sync-request';
import { resolveCohortAttempt } from '../../shared/audiences/reconcile';
import type { ApiDeps } from '../deps';
import { defineRoute, type RouteDef } from '../http/route';
import { IdParams, uuidOr404 } from '../http/params';

const CohortEnvelope = z.object({ cohort: CohortSchema }).meta({ id: 'CohortEnvelope' });
const SyncEnvelope = z.object({ cohort: CohortSchema, attempt: CohortAttemptSchema }).meta({ id: 'AudienceSyncEnvelope' });

/** Spec 28 is human-only and needs operator:reconcile: refused before the request is even parsed. */
const requireReconciler = requireHuman('resolve identity attempts', 'operator:reconcile');

/** Audience sync (spec 20), cohorts and identity reconciliation (spec 28). */
export function audienceRoutes(deps: ApiDeps): RouteDef[] {
  const { db, logger } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/sync-audience',
      operationId: 'syncAudience',
      summary:
        "Build an identity cohort from the campaign's confirmed exposure and queue its sync to a supplier. 202 is not synced: inspect the attempt.",
      tags: ['audiences'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: SyncAudienceSchema,
      governedAction: 'audience.sync',
      responses: {
        202: { description: 'The cohort and its queued attempt.', schema: SyncEnvelope },
        400: { description: 'Invalid body, a channel both exposed and not exposed, a repeated channel, or an unknown adapter.' },
        403: { description: 'A channel outside your product, or a delegated agent without an approved, bound step.' },
        404: { description: 'Not found.' },
        409: { description: 'No confirmed exposure on exposedOn, or this supplier audience has a sync still open or unresolved.' },
        422: { description: 'The adapter cannot sync audiences, serve the channel or mode, or live access is not approved.' },
      },
      async handler({ principal, params, body, log }) {
        const { queued, ...result } = await requestAudienceSync(db, principal, actorOf(principal).actorId, uuidOr404(params.id), body);
        await relayAfterCommit(db, deps.producers.addAll, log ?? logger, { cohortId: result.cohort.id }, queued);
        return { status: 202, body: result };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/cohorts',
      operationId: 'listCampaignCohorts',
      summary: "A campaign's identity cohorts with their sync attempts, newest first.",
      tags: ['audiences'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      responses: {
        200: { description: 'Cohorts.', schema: z.object({ cohorts: z.array(CohortSchema) }) },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        const campaign = await findCampaign(db, principal, uuidOr404(params.id));
        if (!campaign) throw notFound();
        return { status: 200, body: { cohorts: await listCampaignCohorts(db, campaign.id) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/identity/cohorts/:cohortId',
      operationId: 'getIdentityCohort',
      summary: 'An identity cohort with every sync attempt, its status, supplier reference and resolution.',
      tags: ['audiences'],
      access: 'bearer',
      scope: { resource: 'cohort', param: 'cohortId' },
      params: CohortParams,
      responses: { 200: { description: 'The cohort.', schema: CohortEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        const cohort = await findCohort(db, principal, uuidOr404(params.cohortId));
        if (!cohort) throw notFound();
        return { status: 200, body: { cohort } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/identity/cohorts/:cohortId/attempts/:attemptId/resolve',
      operationId: 'resolveIdentityAttempt',
      summary:
        'An operator discards an attempt whose outcome is unknown, with evidence that its result is unavailable. Retries and queues nothing.',
      tags: ['audiences', 'operators'],
      access: 'bearer',
      scope: { resource: 'cohort', param: 'cohortId' },
      params: AttemptParams,
      body: ResolveAttemptSchema,
      authorize: requireReconciler,
      responses: {
        200: { description: 'The cohort after the resolution.', schema: CohortEnvelope },
        403: { description: 'Needs a human with operator:reconcile.' },
        404: { description: 'Not found.' },
        409: { description: 'expectedRevision is not current (revision_conflict), or the attempt does not need resolution.' },
      },
      async handler({ principal, params, body }) {
        const ids = { cohortId: uuidOr404(params.cohortId), attemptId: uuidOr404(params.attemptId) };
        return { status: 200, body: { cohort: await resolveCohortAttempt(db, principal, ids, body) } };
      },
    }),
  ];
}
