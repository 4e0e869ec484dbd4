import type { Knex } from 'knex';
import { firstPrepared } from '../db/knex';
import { notFound } from '../errors';
import { isUuid } from '../ids';
import type { Principal } from '../auth/principal';
import { withinScope } from '../auth/scope';

/**
 * What each private resource's product scope is: the set of channels it concerns. Mixed
 * resources take the union of everything they touch, so that the strict rule of
 * `withinScope` (all of them, not any) hides them from a narrower product:
 * - campaign: its channels; plan and booking: the campaign's and their lines' channels;
 * - creative: its channel and, when tied to one, its campaign's; cohort: its campaign's and
 *   the channels its definition names;
 * - persona, brand lift study, buyer session: the channels of the product that created it
 *   (a study of a campaign also takes the campaign's);
 * - optimization, lift evidence, rule: their campaign's channels;
 * - prepared agent action (approval, its steps, its run): every resource its parameters name
 *   and every channel they name. An action naming something that no longer resolves is hidden.
 * null means "not this workspace's": the same 404.
 */
export const SCOPED_RESOURCES = [
  'campaign',
  'plan',
  'booking',
  'creative',
  'cohort',
  'study',
  'persona',
  'buyer-session',
  'agent-approval',
  'agent-step',
  'agent-run',
  'optimization',
  'lift-evidence',
  'rule',
] as const;
export type ScopedResource = (typeof SCOPED_RESOURCES)[number];

type Channels = string[] | null;
type Resolver = (db: Knex, advertiserId: string, id: string) => Promise<Channels>;

const union = (...sets: Array<readonly string[] | null | undefined>) => [...new Set(sets.flatMap((s) => s ?? []))];

// Prepared: every scoped request about a campaign, or a resource of one, asks it first.
async function campaignChannels(db: Knex, advertiserId: string, id: string): Promise<Channels> {
  const row = await firstPrepared<{ channels: string[] }>(
    db,
    db('campaigns').where({ id, advertiser_id: advertiserId }).select('channels'),
  );
  return row ? row.channels : null;
}

/** Channels an agent action's parameters name, directly or through the resources they name. */
async function actionChannels(db: Knex, advertiserId: string, parameters: Record<string, unknown>): Promise<Channels> {
  const named: Array<[ScopedResource | null, unknown]> = [
    ['campaign', parameters.campaignId],
    ['creative', parameters.creativeId],
    ['study', parameters.studyId],
    ['optimization', parameters.optimizationId],
    ['booking', parameters.bookingId],
  ];
  let channels: string[] = [];
  for (const [kind, id] of named) {
    if (id === undefined) continue;
    const resolved = kind && typeof id === 'string' ? await resourceChannels(db, advertiserId, kind, id) : null;
    if (!resolved) return null;
    channels = union(channels, resolved);
  }
  const direct = [parameters.channel, parameters.exposedOn, parameters.notExposedOn].flat().filter((c) => typeof c === 'string');
  return union(channels, direct as string[]);
}

async function approvalChannels(db: Knex, advertiserId: string, where: Record<string, string>): Promise<Channels> {
  const row = await db('agent_approvals')
    .where({ ...where, advertiser_id: advertiserId })
    .first('action');
  return row ? actionChannels(db, advertiserId, (row.action?.parameters ?? {}) as Record<string, unknown>) : null;
}

/** A booking concerns its campaign's channels and its lines': the rule for every read of a booking. */
export const bookingChannels = (campaign: readonly string[], lines: readonly string[]) => union(campaign, lines);

const RESOLVERS: Record<ScopedResource, Resolver> = {
  campaign: campaignChannels,
  async plan(db, advertiserId, id) {
    const row = await db('plans').where({ id, advertiser_id: advertiserId }).first('campaign_id', 'lines');
    if (!row) return null;
    const campaign = await campaignChannels(db, advertiserId, row.campaign_id);
    return (
      campaign &&
      union(
        campaign,
        (row.lines as Array<{ channel: string }>).map((l) => l.channel),
      )
    );
  },
  async booking(db, advertiserId, id) {
    // One round trip: every bearer read of a booking asks this first.
    const row = await db('bookings as b')
      .join('campaigns as c', function () {
        this.on('c.id', 'b.campaign_id').andOn('c.advertiser_id', 'b.advertiser_id');
      })
      .where({ 'b.id': id, 'b.advertiser_id': advertiserId })
      .first(
        'c.channels',
        db.raw(`(select coalesce(array_agg(distinct l.channel), '{}') from booking_lines l where l.booking_id = b.id) as line_channels`),
      );
    return row ? bookingChannels(row.channels as string[], row.line_channels as string[]) : null;
  },
  async creative(db, advertiserId, id) {
    const row = await db('creatives').where({ id, advertiser_id: advertiserId }).first('channel', 'campaign_id');
    if (!row) return null;
    const campaign = row.campaign_id ? await campaignChannels(db, advertiserId, row.campaign_id) : [];
    return campaign && union([row.channel as string], campaign);
  },
  async cohort(db, advertiserId, id) {
    const row = await db('identity_cohorts').where({ id, advertiser_id: advertiserId }).first('campaign_id', 'definition');
    if (!row) return null;
    const campaign = await campaignChannels(db, advertiserId, row.campaign_id);
    const d = row.definition as { channel: string; exposedOn: string[]; notExposedOn: string[] };
    return campaign && union(campaign, [d.channel], d.exposedOn, d.notExposedOn);
  },
  async study(db, advertiserId, id) {
    const row = await db('brand_lift_studies').where({ id, advertiser_id: advertiserId }).first('campaign_id', 'scope_channels');
    if (!row) return null;
    const campaign = row.campaign_id ? await campaignChannels(db, advertiserId, row.campaign_id) : [];
    return campaign && union(row.scope_channels as string[], campaign);
  },
  async persona(db, advertiserId, id) {
    const row = await db('personas').where({ id, advertiser_id: advertiserId }).first('scope_channels');
    return row ? (row.scope_channels as string[]) : null;
  },
  async 'buyer-session'(db, advertiserId, id) {
    const row = await db('buyer_sessions').where({ id, advertiser_id: advertiserId }).first('product_scope');
    return row ? ((row.product_scope as { channels: string[] }).channels ?? null) : null;
  },
  'agent-approval': (db, advertiserId, id) => approvalChannels(db, advertiserId, { id }),
  async optimization(db, advertiserId, id) {
    const row = await db('optimizations').where({ id, advertiser_id: advertiserId }).first('campaign_id');
    return row ? campaignChannels(db, advertiserId, row.campaign_id) : null;
  },
  async 'lift-evidence'(db, advertiserId, id) {
    const row = await db('lift_evidence').where({ id, advertiser_id: advertiserId }).first('campaign_id');
    return row ? campaignChannels(db, advertiserId, row.campaign_id) : null;
  },
  async 'agent-step'(db, advertiserId, id) {
    const row = await db('agent_steps').where({ id, advertiser_id: advertiserId }).first('approval_id');
    return row?.approval_id ? approvalChannels(db, advertiserId, { id: row.approval_id as string }) : null;
  },
  'agent-run': (db, advertiserId, id) => approvalChannels(db, advertiserId, { run_id: id }),
  async rule(db, advertiserId, id) {
    const row = await db('rules').where({ id, advertiser_id: advertiserId }).whereNull('deleted_at').first('campaign_id');
    return row ? campaignChannels(db, advertiserId, row.campaign_id) : null;
  },
};

/** The channels a resource of this workspace concerns, or null when the workspace has no such resource. */
export async function resourceChannels(db: Knex, advertiserId: string, kind: ScopedResource, id: string): Promise<Channels> {
  if (!isUuid(id)) return null;
  return RESOLVERS[kind](db, advertiserId, id);
}

/** The scoped lookup every private route goes through: another tenant's, unknown and out-of-product are one 404. */
export async function requireInScope(db: Knex, p: Principal, kind: ScopedResource, id: string): Promise<void> {
  const channels = await resourceChannels(db, p.advertiserId, kind, id);
  if (!channels || !withinScope(p, channels)) throw notFound();
}
