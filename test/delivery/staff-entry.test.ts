import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { liveBooking } from '../billing/support';
import { confirmLines } from './support';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';

let env: TestEnv;
let api: TestApi;
let staff: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await grantStaff(env.staff, 'stan');
  staff = await env.issuer.token({ org: 'staff', user: 'stan' });
});
afterAll(() => env.close());

/** A confirmed live line of a workflow supplier (staff booked it by hand), its client assigned to stan. */
async function workflowLine(org: string, adapterKey = 'manual') {
  await fundWallet(env, org, 100_000);
  const { bookingId, lineIds } = await liveBooking(env, org, [30_000], 30_000);
  await env.db('booking_lines').whereIn('id', lineIds).update({ adapter_key: adapterKey });
  await confirmLines(env, bookingId, lineIds);
  await assignClient(env.staff, 'stan', org);
  return { bookingId, lineId: lineIds[0]!, path: `/api/v1/internal/fulfilment/bookings/${bookingId}/lines/${lineIds[0]}/delivery` };
}

const CSV = (rows: string[]) => ['date,impressions,clicks,completions,spend_minor', ...rows].join('\n');
const footprint = async (lineId: string) => ({
  days: await env.db('delivery_days').where({ line_id: lineId }).orderBy('day').select('day', 'spend_minor', 'revision'),
  revisions: Number((await env.db('delivery_revisions').where({ line_id: lineId }).count({ n: '*' }))[0]!.n),
  money: Number((await env.db('wallet_entries').where({ line_id: lineId }).count({ n: '*' }))[0]!.n),
});

describe('staff enter a workflow line’s delivery', () => {
  test('the CSV is stored as the staff member’s, each restated figure kept with who entered it, and the spend captured', async () => {
    const { lineId, path, bookingId } = await workflowLine('org-s1');
    const first = await post(api, staff, path, { csv: CSV(['2099-03-01,1000,10,0,4000', '2099-03-02,1200,12,0,5000']) });
    expect(first.status).toBe(200);
    const again = await post(api, staff, path, { csv: CSV(['2099-03-02,1200,12,0,4500']) });
    expect(again.status).toBe(200);
    const rows = await env.db('delivery_revisions').where({ line_id: lineId }).orderBy('id').select('source', 'entered_by', 'spend_minor');
    expect(rows.map((r) => [r.source, r.entered_by, Number(r.spend_minor)])).toEqual([
      ['staff', 'stan', 4000],
      ['staff', 'stan', 5000],
      ['staff', 'stan', 4500],
    ]);
    const { wallet, consistent } = await walletAndLedger(env, 'org-s1');
    expect(consistent).toBe(true);
    expect(wallet.balanceMinor).toBe(100_000 - 8_500);
    const events = await env.db('booking_events').where({ booking_id: bookingId, action: 'line.delivery-entered' });
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ actor_id: 'stan', line_id: lineId });
  });

  test('a malformed CSV, a date outside the flight or unknown fields are refused with 400 and change nothing', async () => {
    const { lineId, path } = await workflowLine('org-s2');
    const before = await footprint(lineId);
    for (const body of [
      { csv: 'day,spend\n2099-03-01,5' },
      { csv: CSV(['2099-03-01,1,1,0,-5']) },
      { csv: CSV(['2099-02-28,1,1,0,5']) },
      { csv: CSV(['2099-03-01,1,1,0,5', '2099-03-01,1,1,0,6']) },
      { csv: CSV(['2099-02-30,1,1,0,5']) },
      { csv: CSV([]) },
      { csv: CSV(['2099-03-01,1,1,0,5']), extra: 1 },
    ]) {
      const res = await post(api, staff, path, body);
      expect([JSON.stringify(body).slice(0, 40), res.status]).toEqual([JSON.stringify(body).slice(0, 40), 400]);
    }
    expect(await footprint(lineId)).toEqual(before);
  });

  test('a supplier that reports its own delivery is refused with 409; a caller who is not staff finds nothing', async () => {
    const { path, lineId } = await workflowLine('org-s3', 'live-ctv');
    const refused = await post(api, staff, path, { csv: CSV(['2099-03-01,1,1,0,5']) });
    expect(refused.status).toBe(409);
    expect((await json<{ code: string }>(refused)).code).toBe('not_workflow');
    const customer = await env.issuer.token({ org: 'org-s3', user: 'carol' });
    expect((await post(api, customer, path, { csv: CSV(['2099-03-01,1,1,0,5']) })).status).toBe(404);
    expect((await footprint(lineId)).revisions).toBe(0);
  });

  test('an entry that takes a line past its budget tells subscribers once, though its flight is not under way', async () => {
    const org = 'org-s4';
    const owner = await env.issuer.token({ org, user: `${org}-owner` });
    const subscribed = await post(api, owner, '/api/v1/webhooks/subscriptions', {
      url: 'http://127.0.0.1:9/budget',
      eventTypes: ['delivery.over_budget'],
    });
    expect(subscribed.status).toBe(201);
    // Its flight is in 2099: the line is not running, so no pacing is told; its budget is 30,000.
    const { lineId, path, bookingId } = await workflowLine(org);
    const told = () => env.db('webhook_events').where({ workspace_id: org, type: 'delivery.over_budget' }).select('subject_id', 'body');
    expect((await post(api, staff, path, { csv: CSV(['2099-03-01,1000,10,0,30000']) })).status).toBe(200);
    expect(await told()).toEqual([]);
    expect((await post(api, staff, path, { csv: CSV(['2099-03-02,1000,10,0,1500']) })).status).toBe(200);
    const campaignId = (await env.db('bookings').where({ id: bookingId }).first('campaign_id')).campaign_id as string;
    expect(await told()).toEqual([
      {
        subject_id: lineId,
        body: { campaignId, bookingId, lineId, budgetMinor: 30_000, deliveredSpendMinor: 31_500, overDeliveredMinor: 1_500 },
      },
    ]);
    // Restated further past the budget: already told.
    expect((await post(api, staff, path, { csv: CSV(['2099-03-02,1000,10,0,2500']) })).status).toBe(200);
    expect(await told()).toHaveLength(1);
    expect(await env.db('booking_lines').where({ id: lineId }).first('over_budget_at')).toMatchObject({ over_budget_at: expect.any(Date) });
  });
});
