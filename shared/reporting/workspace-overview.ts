import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest, notFound } from '../errors';
import type { Principal } from '../auth/principal';
import { toMinor } from '../db/knex';
import { findCampaign } from '../campaigns/campaign-store';
import { periodOf, readWallet } from '../wallet/ledger';
import { decideTier, managementFee } from '../wallet/fees';
import { deliveredSpend, linesOffPace } from '../delivery/delivery-figures';
import { pageviewsByDay } from '../pixel/pageview-rollup';
import { reconciliationFigures } from './reconciliation-figures';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');
export const OverviewQuerySchema = z.strictObject({
  from: Day.optional(),
  to: Day.optional(),
  campaignId: z.string().min(1).max(100).optional(),
});

/** The longest range one overview covers. */
export const OVERVIEW_MAX_DAYS = 366;
const DAY_MS = 86_400_000;
const ATTENTION_LIMIT = 100;

function parseDay(value: string, path: string): Date {
  const d = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) {
    throw badRequest(`${value} is not a calendar date.`, [{ path, message: 'not a calendar date' }]);
  }
  return d;
}

function rangeOf(q: z.infer<typeof OverviewQuerySchema>): { from: Date; to: Date } {
  const to = q.to ? parseDay(q.to, 'query.to') : new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z');
  const from = q.from ? parseDay(q.from, 'query.from') : new Date(to.getTime() - 29 * DAY_MS);
  if (from > to) throw badRequest('from must not be after to.', [{ path: 'query.from', message: 'after to' }]);
  if ((to.getTime() - from.getTime()) / DAY_MS + 1 > OVERVIEW_MAX_DAYS) {
    throw badRequest(`An overview covers at most ${OVERVIEW_MAX_DAYS} days.`, [{ path: 'query.from', message: 'range too long' }]);
  }
  return { from, to };
}

const countBy = (rows: Array<{ status: string; n: string | number }>) => Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));

/**
 * Spec 24: what a workspace needs to see first. Every figure comes from one indexed query;
 * product scope applies to campaigns and what hangs off them, as everywhere else.
 */
export async function workspaceOverview(db: Knex, p: Principal, query: z.infer<typeof OverviewQuerySchema>, pacingTolerance = 0.15) {
  const { from, to } = rangeOf(query);
  const end = new Date(to.getTime() + DAY_MS);
  let campaignId: string | null = null;
  if (query.campaignId) {
    const campaign = /^[0-9a-f-]{36}$/i.test(query.campaignId) ? await findCampaign(db, p, query.campaignId) : null;
    if (!campaign) throw notFound();
    campaignId = campaign.id;
  }
  const campaigns = () => {
    const q = db('campaigns').where({ advertiser_id: p.advertiserId }).whereRaw('channels <@ ?::text[]', [p.channels]);
    return campaignId ? q.where({ id: campaignId }) : q;
  };
  const bookings = () => db('bookings').where('advertiser_id', p.advertiserId).whereIn('campaign_id', campaigns().select('id'));

  const campaignStatuses = await campaigns().groupBy('status').select('status', db.raw('count(*) as n'));
  const bookingStatuses = await bookings().groupBy('status').select('status', db.raw('count(*) as n'));
  const attention = () =>
    db('booking_lines as l')
      .join('bookings as b', 'b.id', 'l.booking_id')
      .where('l.advertiser_id', p.advertiserId)
      .whereIn('b.campaign_id', campaigns().select('id'))
      .where((w) =>
        w
          .whereIn('l.status', ['reconciliation-required', 'rejected'])
          .orWhere((a) => a.where('l.status', 'queued').whereNotNull('l.execution_method').whereNotNull('l.workflow_steps')),
      );
  const attentionRows = await attention()
    .orderBy([{ column: 'l.updated_at', order: 'desc' }, { column: 'l.id' }])
    .limit(ATTENTION_LIMIT)
    .select('l.id', 'l.booking_id', 'b.campaign_id', 'l.adapter_key', 'l.channel', 'l.status', 'l.updated_at');
  const [{ n: attentionTotal }] = await attention().count({ n: '*' });
  const spend = await db('wallet_entries')
    .where({ advertiser_id: p.advertiserId })
    .whereIn('kind', ['capture', 'capture_reversal'])
    .where('created_at', '>=', from)
    .where('created_at', '<', end)
    .modify((q) => (campaignId ? q.whereIn('booking_id', bookings().select('id')) : q))
    .first(db.raw("coalesce(sum(case when kind = 'capture' then amount_minor else -amount_minor end), 0) as total"));
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const delivered = await deliveredSpend(db, p.advertiserId, day(from), day(to), bookings().select('id'));
  const offPace = await linesOffPace(db, p.advertiserId, campaigns().select('id'), pacingTolerance);
  const tier = (await decideTier(db, p.advertiserId, periodOf(new Date()))).tier;
  const days = await pageviewsByDay(db, p.advertiserId, from, to);
  const funding = await db('funding_requests')
    .where({ advertiser_id: p.advertiserId })
    .whereIn('status', ['created', 'open', 'processing'])
    .orderBy('created_at', 'desc')
    .limit(50)
    .select('id', 'status', 'amount_minor', 'created_at');
  const approvals = await db('agent_approvals')
    .where({ advertiser_id: p.advertiserId, status: 'pending' })
    .orderBy('created_at', 'desc')
    .limit(50)
    .select('id', 'action_name', 'action_digest', 'agent_client_id', 'created_at');

  const reason = (status: string) => (status === 'queued' ? 'awaiting-staff' : status);
  return {
    overview: {
      range: { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) },
      campaignId,
      campaigns: { byStatus: countBy(campaignStatuses as never) },
      bookings: { byStatus: countBy(bookingStatuses as never) },
      linesNeedingAttention: {
        total: Number(attentionTotal),
        lines: attentionRows.map((l) => ({
          bookingId: l.booking_id,
          lineId: l.id,
          campaignId: l.campaign_id,
          adapterKey: l.adapter_key,
          channel: l.channel,
          status: l.status,
          reason: reason(l.status),
          href: `/api/v1/bookings/${l.booking_id}`,
        })),
      },
      spend: {
        mediaSpendMinor: toMinor(spend.total),
        deliveredSpendMinor: delivered.liveMinor,
        currency: 'GBP' as const,
        // Sandbox bookings move no money: what they delivered, and the fee it would accrue, apart.
        sandbox: { deliveredSpendMinor: delivered.sandboxMinor, managementFeesMinor: managementFee(tier, delivered.sandboxMinor) },
      },
      linesOffPace: {
        total: offPace.length,
        lines: offPace.slice(0, ATTENTION_LIMIT).map((l) => ({ ...l, href: `/api/v1/campaigns/${l.campaignId}/delivery` })),
      },
      pageviews: { total: days.reduce((s, d) => s + d.pageviews, 0), byDay: days },
      wallet: await readWallet(db, p.advertiserId),
      /** Invoices received by state, disputes at stake, make-goods owed and restated final days, for the whole workspace. */
      reconciliation: await reconciliationFigures(db, p.advertiserId),
      openFundingRequests: funding.map((f) => ({
        id: f.id,
        status: f.status,
        amountMinor: toMinor(f.amount_minor),
        createdAt: (f.created_at as Date).toISOString(),
      })),
      pendingApprovals: approvals.map((a) => ({
        id: a.id,
        action: a.action_name,
        actionDigest: a.action_digest,
        agentClientId: a.agent_client_id,
        createdAt: (a.created_at as Date).toISOString(),
      })),
    },
  };
}
