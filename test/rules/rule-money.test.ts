import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, type BookingBody } from '../support/bookings';
import { approvedCreative } from '../support/creatives';
import { until } from '../support/wait';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { grantSellerAccess } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';
import { approver, createRule, enable, moveRule, ruleCycle, ruleFirings, settled } from './support';

/**
 * A rule's budget move on a live booking, where money moves: the lines are booked on an AdCP
 * seller the test controls, whose delivery the workers' scheduled polls read (and capture).
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

const today = dateOnly(new Date());

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, DELIVERY_POLL_EVERY_MS: '1000' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

/** A funded workspace launches two live lines of 100,000 on the seller; both confirmed. */
async function twoLiveLines(org: string) {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
  await grantSellerAccess(env.db, org, 'adcp-ctl');
  await fundWallet(env, org, 1_000_000);
  const creativeIds = [await approvedCreative(api, env.db, token, 'adcp-ctl')];
  const line = { channel: 'ctv', adapterKey: 'adcp-ctl', budgetMinor: 100_000, supplierProduct: productRef('ctv_sync'), creativeIds };
  const { campaignId, planVersion } = await draftCampaign(api, token, [line, line] as never, {
    executionMode: 'live',
    startDate: addDays(today, -3),
    endDate: addDays(today, 20),
    maximumCommitmentMinor: 200_000,
  });
  await approve(api, token, campaignId, planVersion);
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  expect(res.status).toBe(202);
  const { booking } = await json<{ booking: BookingBody }>(res);
  await until('the seller books both lines', async () =>
    (await env.db('booking_lines').where({ booking_id: booking.id })).every((l) => l.status === 'confirmed'),
  );
  const lines = await env.db('booking_lines').where({ booking_id: booking.id }).orderBy('position');
  return { token, campaignId, bookingId: booking.id, lines: lines.map((l) => ({ id: String(l.id), ref: String(l.provider_reference) })) };
}

test('a rule moves budget between two live lines: each line change is one supplier operation and one ledger movement, the wallet equals its entries, and nothing is held twice', async () => {
  const org = 'org-rule-live';
  const { campaignId, lines } = await twoLiveLines(org);
  const [giver, taker] = lines as [{ id: string; ref: string }, { id: string; ref: string }];
  // The seller reports three days for the taker and nothing for the giver; the scheduled poll captures the taker's spend.
  seller.delivery.set(
    parseAdcpReference(taker.ref).mediaBuyId,
    [-3, -2, -1].map((k) => ({ date: addDays(today, k), impressions: 1_000, spend: 30 })),
  );
  await until('the taker’s spend to be captured', async () => {
    const [row] = await env.db('wallet_entries').where({ line_id: taker.id, kind: 'capture' }).sum({ s: 'amount_minor' });
    return Number(row?.s ?? 0) === 9_000;
  });
  const before = await walletAndLedger(env, org);
  expect(before.consistent).toBe(true);
  const lastEntry = Number((await env.db('wallet_entries').max({ id: 'id' }))[0]!.id);

  const lead = await approver(env, org);
  const rule = await enable(
    api,
    lead,
    await createRule(
      api,
      lead,
      moveRule(campaignId, {
        name: 'Move budget off a line that has not delivered',
        condition: { subject: 'line', metric: 'delivered-spend-minor', operator: 'below', value: 1 },
        action: { kind: 'move-budget', amountMinor: 10_000, toLineId: taker.id },
        guardrails: { maxMovedPerDayMinor: 10_000, maxMovedPerFlightMinor: 10_000, minLineBudgetMinor: 50_000, cooldownDays: 0 },
      }),
    ),
    10_000,
  );
  await ruleCycle(env, org);
  await until('the rule to settle', async () => (await ruleFirings(env, rule.id)).every((f) => f.outcome !== 'executing'));
  await settled(env, [giver.id, taker.id]);
  const fired = await ruleFirings(env, rule.id);
  expect(fired.map((f) => [f.subject_id, f.outcome, Number(f.moved_minor)])).toEqual([[giver.id, 'executed', 10_000]]);

  // One amendment; one change-budget per line, each applied by the seller once.
  const ops = await env.db('line_operations').where({ line_id: giver.id }).orWhere({ line_id: taker.id }).orderBy('created_at');
  expect(ops.map((o) => [o.line_id, o.kind, o.status, Number(o.budget_to_minor)]).sort()).toEqual(
    [
      [giver.id, 'change-budget', 'applied', 90_000],
      [taker.id, 'change-budget', 'applied', 110_000],
    ].sort(),
  );
  expect(new Set(ops.map((o) => o.amendment_id)).size).toBe(1);
  expect(seller.updates.map((u) => u.mediaBuyId).sort()).toEqual(lines.map((l) => parseAdcpReference(l.ref).mediaBuyId).sort());
  expect(
    (await env.db('booking_lines').whereIn('id', [giver.id, taker.id]).orderBy('position')).map((l) => Number(l.budget_minor)),
  ).toEqual([90_000, 110_000]);

  // The ledger: since the move, exactly one movement per line change, keyed to its operation: the
  // taker's increase held from the wallet, the giver's decrease given back once the seller applied it.
  const since = await env.db('wallet_entries').where({ advertiser_id: org }).where('id', '>', lastEntry).orderBy('id');
  const opOf = (lineId: string) => ops.find((o) => o.line_id === lineId)!.id;
  expect(since.map((e) => [e.kind, e.subject_type, e.subject_id, Number(e.amount_minor)]).sort()).toEqual(
    [
      ['reservation', 'line_operation', opOf(taker.id), 10_000],
      ['release', 'line_operation', opOf(giver.id), 10_000],
    ].sort(),
  );
  // The wallet equals its entries, and the moved money is held once: the campaign's total budget did not change, nor did what is held for it.
  const after = await walletAndLedger(env, org);
  expect(after.consistent).toBe(true);
  expect(after.wallet).toEqual(before.wallet);
  // The one approval and its one receipt.
  const approval = await env.db('agent_approvals').where({ id: fired[0]!.approval_id }).first();
  expect([approval.action_name, approval.status]).toEqual(['campaign.amend', 'approved']);
  expect((await env.db('agent_receipts').where({ step_id: fired[0]!.step_id })).map((r) => r.response_status)).toEqual([202]);

  // Cycles again the same day move nothing more: the giver has fired today.
  await Promise.all([ruleCycle(env, org), ruleCycle(env, org)]);
  expect(await ruleFirings(env, rule.id)).toHaveLength(1);
  expect((await walletAndLedger(env, org)).wallet).toEqual(before.wallet);
}, 90_000);
