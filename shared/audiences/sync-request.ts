import { requireEntitled } from '../auth/scope';
import { requireSupplierAccess } from '../adapters/credentials';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { badRequest, conflict, notFound, unprocessable } from '../errors';
import type { Principal } from '../auth/principal';
import { findAdapter, type AdapterDescriptor } from '../adapters/catalogue';
import { findCampaign } from '../campaigns/campaign-store';
import { enqueueInTransaction } from '../outbox/outbox';
import type { JobMessage } from '../queues/jobs';
import { audienceSyncMessage } from '../queues/jobs';
import type { Cohort, CohortAttempt, CohortDefinition, SyncAudience } from './cohort-schemas';
import { loadCohort } from './cohort-store';
import { campaignExposure, estimatedSize, isExposedOn } from './exposure';

export interface SyncRequested {
  cohort: Cohort;
  attempt: CohortAttempt;
  /** The sync job this request wrote to the outbox, for the request to relay after commit. */
  queued: JobMessage[];
}

/** The adapter must exist, sync audiences at all, serve the channel and run in the mode asked for. */
function checkAdapter(body: SyncAudience): AdapterDescriptor {
  const adapter = findAdapter(body.adapterKey);
  if (!adapter) throw badRequest(`adapterKey ${body.adapterKey} is not a known supplier adapter.`, undefined, 'unknown_adapter');
  if (adapter.kind === 'workflow') {
    throw unprocessable(
      `Adapter ${adapter.key} is a staff workflow; it has no audience endpoint to sync a cohort to.`,
      'audience_sync_unsupported',
    );
  }
  if (!adapter.channels.includes(body.channel)) {
    throw unprocessable(`Adapter ${adapter.key} does not serve ${body.channel}.`, 'adapter_channel_unsupported', 'correctable');
  }
  if (!adapter.modes.includes(body.executionMode)) {
    throw unprocessable(`Adapter ${adapter.key} cannot execute in ${body.executionMode} mode.`, 'adapter_mode_unsupported');
  }
  return adapter;
}

/** Live syncs need approved supplier access, exactly as a live launch does; sandbox syncs need none. */
async function checkSupplierAccess(db: Knex, advertiserId: string, adapter: AdapterDescriptor, mode: 'sandbox' | 'live') {
  if (mode !== 'live' || !adapter.requiresCredential) return;
  await requireSupplierAccess(db, adapter.key, advertiserId, 'Live audience sync');
}

/**
 * A sync to the same supplier audience (campaign, adapter, channel, purpose) that is still
 * open or whose outcome is unknown would risk a second audience at the supplier: the first
 * must settle, or a person must discard its unavailable result, before another is sent.
 */
async function checkNoOpenSync(trx: Knex, campaignId: string, def: CohortDefinition) {
  const open = await trx('identity_cohorts')
    .where({ campaign_id: campaignId })
    .whereIn('state', ['syncing', 'needs-resolution'])
    .whereRaw("definition->>'adapterKey' = ? and definition->>'channel' = ? and definition->>'purpose' = ?", [
      def.adapterKey,
      def.channel,
      def.purpose,
    ])
    .first('id', 'state');
  if (!open) return;
  if (open.state === 'syncing') {
    throw conflict(
      `Cohort ${open.id} is still syncing to this supplier audience; inspect it before syncing again.`,
      'audience_sync_in_progress',
      'transient',
    );
  }
  throw conflict(
    `Cohort ${open.id} has a sync whose outcome is unknown. An operator must resolve it before this audience is synced again.`,
    'audience_sync_unresolved',
    'terminal',
  );
}

/**
 * Spec 20: builds an identity cohort from the campaign's exposure and queues its sync. The
 * cohort, its first attempt and the outbox row are one transaction; nothing is recorded
 * when any check refuses.
 */
export async function requestAudienceSync(
  db: Knex,
  p: Principal,
  actorId: string,
  campaignId: string,
  body: SyncAudience,
): Promise<SyncRequested> {
  if (!(await findCampaign(db, p, campaignId))) throw notFound();
  requireEntitled(p, [body.channel, ...body.exposedOn, ...body.notExposedOn]);
  const adapter = checkAdapter(body);
  await checkSupplierAccess(db, p.advertiserId, adapter, body.executionMode);

  const definition: CohortDefinition = {
    exposedOn: body.exposedOn,
    notExposedOn: body.notExposedOn,
    channel: body.channel,
    purpose: body.purpose,
    adapterKey: body.adapterKey,
    executionMode: body.executionMode,
  };
  return db.transaction(async (trx) => {
    // The campaign row lock serialises syncs of one campaign, so the open-sync check holds.
    const campaign = await findCampaign(trx, p, campaignId, { forUpdate: true });
    if (!campaign) throw notFound();
    await checkNoOpenSync(trx, campaign.id, definition);
    const exposure = await campaignExposure(trx, campaign.id);
    if (!isExposedOn(exposure, definition.exposedOn)) {
      throw conflict(
        `The campaign has no confirmed line on ${definition.exposedOn.join(', ')}, so nobody has been exposed there yet.`,
        'no_exposure_data',
      );
    }
    const ids = { cohortId: randomUUID(), attemptId: randomUUID() };
    await trx('identity_cohorts').insert({
      id: ids.cohortId,
      advertiser_id: p.advertiserId,
      campaign_id: campaign.id,
      definition: JSON.stringify(definition),
      estimated_size: estimatedSize(exposure, definition.exposedOn, definition.notExposedOn),
      revision: 1,
      state: 'syncing',
      created_by: actorId,
    });
    await trx('cohort_sync_attempts').insert({ id: ids.attemptId, cohort_id: ids.cohortId, revision: 1, status: 'queued' });
    const queued = [audienceSyncMessage(ids)];
    await enqueueInTransaction(trx, queued);
    // The state as committed: the attempt is queued until a worker takes it up.
    const cohort = (await loadCohort(trx, ids.cohortId))!;
    return { cohort, attempt: cohort.attempts.find((a) => a.id === ids.attemptId)!, queued };
  });
}
