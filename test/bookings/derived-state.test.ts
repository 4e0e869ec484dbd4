import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, launchPlan, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { addDays, dateOnly } from '../../shared/dates';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ WORKER_QUEUES: 'suppliers' });
});
afterAll(() => env.close());

const today = dateOnly(new Date());
type Viewed = BookingBody & {
  state: string;
  lines: Array<BookingBody['lines'][number] & { state: string; stop: { kind: string } | null }>;
};
const campaignState = async (token: string, id: string) =>
  (await json<{ campaign: { status: string; state: string } }>(await api.fetch(`/api/v1/campaigns/${id}`, { token }))).campaign;
const settled = (b: BookingBody) => b.lines.every((l) => !(l as { pendingOperation?: string | null }).pendingOperation);

describe('a derived state a person understands, beside the spec’s statuses', () => {
  test('running, paused (a line the spec calls stopped), ended; the campaign says the same while its status stays booked', async () => {
    const org = 'org-state-1';
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], org, {
      startDate: today,
      endDate: addDays(today, 9),
    });
    const { token, campaignId } = launched;
    let b = (await waitForBooking(api, token, launched.booking.id, (x) => x.lines[0]!.status === 'confirmed')) as Viewed;
    expect([b.state, b.lines[0]!.state]).toEqual(['running', 'running']);
    expect(await campaignState(token, campaignId)).toEqual(expect.objectContaining({ status: 'booked', state: 'running' }));

    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/pause`, {})).status).toBe(202);
    b = (await waitForBooking(api, token, b.id, (x) => x.lines[0]!.status === 'stopped' && settled(x))) as Viewed;
    expect(b.lines[0]).toMatchObject({ status: 'stopped', stop: { kind: 'pause' }, state: 'paused' });
    expect(b.state).toBe('paused');
    expect(await campaignState(token, campaignId)).toEqual(expect.objectContaining({ status: 'booked', state: 'paused' }));
    const listed = await json<{ campaigns: Array<{ id: string; state: string }> }>(await api.fetch('/api/v1/campaigns', { token }));
    expect(listed.campaigns.find((c) => c.id === campaignId)?.state).toBe('paused');

    // The workspace's clock runs past the flight: ended, whatever the line's status.
    expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 11 })).status).toBe(200);
    b = (await readBooking(api, token, b.id)) as Viewed;
    expect([b.status, b.state, b.lines[0]!.state]).toEqual(['stopped', 'ended', 'ended']);
    expect((await campaignState(token, campaignId)).state).toBe('ended');
  });

  test('not launched, scheduled before its flight, needs attention for an unknown outcome', async () => {
    const org = 'org-state-2';
    const token = await env.issuer.token({ org, user: `${org}-buyer` });
    const drafted = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }]);
    expect((await campaignState(token, drafted.campaignId)).state).toBe('not-launched');

    const later = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], org);
    const scheduled = (await waitForBooking(api, token, later.booking.id, (x) => x.lines[0]!.status === 'confirmed')) as Viewed;
    expect([scheduled.state, scheduled.lines[0]!.state]).toEqual(['scheduled', 'scheduled']);

    // A budget ending in 92: the supplier's answer is lost, and a person must settle it.
    const lost = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_092 }], org);
    const attention = (await waitForBooking(
      api,
      token,
      lost.booking.id,
      (x) => x.lines[0]!.status === 'reconciliation-required',
    )) as Viewed;
    expect([attention.state, attention.lines[0]!.state]).toEqual(['needs-attention', 'needs-attention']);
    expect((await campaignState(token, lost.campaignId)).state).toBe('needs-attention');
  });
});
