import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post } from '../support/bookings';
import { addDays, dateOnly } from '../../shared/dates';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const LINES = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }];
const today = () => dateOnly(new Date());
const count = async (table: string, where: Record<string, unknown>) => Number((await env.db(table).where(where).count({ n: '*' }))[0]!.n);
const advance = async (token: string, days: number) =>
  expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days })).status).toBe(200);

async function expectEnded(res: Response) {
  expect(res.status).toBe(422);
  const body = await json(res);
  expect(body).toMatchObject({ code: 'flight_ended', recovery: 'correctable' });
  return body;
}

describe('a flight that has ended cannot be bought', () => {
  test('creating a campaign whose flight ended is 422 flight_ended and stores nothing; one ending today is accepted', async () => {
    const token = await env.issuer.token({ org: 'org-ended-1', user: 'buyer' });
    const base = { name: 'Old', clientName: 'Acme', budgetMinor: 10_000, maximumCommitmentMinor: 10_000, channels: ['ctv'] };
    for (const executionMode of ['sandbox', 'live']) {
      await expectEnded(
        await post(api, token, '/api/v1/campaigns', { ...base, executionMode, startDate: '2020-01-01', endDate: '2020-01-31' }),
      );
    }
    expect(await count('campaigns', { advertiser_id: 'org-ended-1' })).toBe(0);
    const started = await post(api, token, '/api/v1/campaigns', { ...base, startDate: addDays(today(), -5), endDate: today() });
    expect(started.status).toBe(201);
  });

  test("by the workspace's sandbox clock: a flight its clock has passed is refused at approval and at launch, with nothing changed", async () => {
    const token = await env.issuer.token({ org: 'org-ended-2', user: 'buyer' });
    const flight = { startDate: today(), endDate: addDays(today(), 2) };
    const drafted = await draftCampaign(api, token, LINES, flight);
    const approved = await draftCampaign(api, token, LINES, flight);
    await approve(api, token, approved.campaignId, approved.planVersion);
    await advance(token, 3);

    const body = await expectEnded(
      await post(api, token, `/api/v1/campaigns/${drafted.campaignId}/plan/approve`, { expectedVersion: drafted.planVersion }),
    );
    expect(String(body.detail)).toContain('sandbox clock');
    expect(await env.db('plans').where({ campaign_id: drafted.campaignId }).first()).toMatchObject({
      status: 'draft',
      approved_digest: null,
    });
    await expectEnded(await post(api, token, `/api/v1/campaigns/${approved.campaignId}/launch`));
    expect(await count('bookings', { campaign_id: approved.campaignId })).toBe(0);
    // The same dates are still open in a workspace whose clock has not moved.
    const other = await env.issuer.token({ org: 'org-ended-3', user: 'buyer' });
    const fresh = await draftCampaign(api, other, LINES, flight);
    await approve(api, other, fresh.campaignId, fresh.planVersion);
    expect((await post(api, other, `/api/v1/campaigns/${fresh.campaignId}/launch`)).status).toBe(202);
  });
});
