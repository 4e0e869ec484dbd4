import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { actors, approvedCampaign, approvedLaunch, prepare } from '../agent/support';
import { makeCreative } from '../support/creatives';
import { until } from '../support/wait';
import { randomUUID } from 'node:crypto';
import { WebhookReceiver } from '../support/webhook-receiver';

let env: TestEnv;
let api: TestApi;
let receiver: WebhookReceiver;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  receiver = await WebhookReceiver.start();
  await env.workers({ WEBHOOK_SWEEP_INTERVAL_MS: '200' });
});
afterAll(async () => {
  await receiver.close();
  await env.close();
});

async function subscribe(org: string, eventTypes: string[]) {
  const token = await env.issuer.token({ org, user: `${org}-owner` });
  const res = await post(api, token, '/api/v1/webhooks/subscriptions', { url: receiver.url, eventTypes });
  expect(res.status).toBe(201);
}
const eventsOf = (type: string) => env.db('webhook_events').where({ type }).orderBy('seq');

describe('events are written with the change, and only with it', () => {
  test('a campaign pause is one campaign.paused event, delivered; a refused control writes none', async () => {
    await subscribe('org-pause', ['campaign.paused', 'campaign.resumed']);
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], 'org-pause');
    await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));

    // Nothing is paused: a resume is refused (409) and tells no one.
    const refused = await post(api, launched.token, `/api/v1/campaigns/${launched.campaignId}/resume`);
    expect(refused.status).toBe(409);
    expect(await eventsOf('campaign.resumed')).toHaveLength(0);

    const paused = await post(api, launched.token, `/api/v1/campaigns/${launched.campaignId}/pause`);
    expect(paused.status).toBe(202);
    const [event, ...more] = await eventsOf('campaign.paused');
    expect(more).toHaveLength(0);
    expect(event).toMatchObject({ workspace_id: 'org-pause', subject_type: 'campaign', subject_id: launched.campaignId });
    expect(event.body).toMatchObject({ campaignId: launched.campaignId, bookingId: launched.booking.id, lines: 1 });
    await until('delivered', async () => receiver.events().some((e) => e.id === event.id));
  });

  test("an agent's prepared action is agent.approval.pending, and the person's approval agent.approval.decided", async () => {
    await subscribe('org-agent', ['agent.approval.pending', 'agent.approval.decided']);
    const a = await actors(env, api, 'org-agent');
    const campaignId = await approvedCampaign(api, a.human);
    const { approvalId } = await approvedLaunch(api, a, campaignId, 15_000);
    const pending = await eventsOf('agent.approval.pending');
    const decided = await eventsOf('agent.approval.decided');
    expect(pending.map((e) => e.subject_id)).toEqual([approvalId]);
    expect(decided.map((e) => [e.subject_id, e.body.status])).toEqual([[approvalId, 'approved']]);
    // A preparation refused by the mandate writes nothing.
    const over = await prepare(api, a.agent, 'campaign.launch', { campaignId }, 5_000_000);
    expect(over.status).toBeGreaterThanOrEqual(400);
    expect(await eventsOf('agent.approval.pending')).toHaveLength(1);
    await until('both delivered', async () =>
      ['agent.approval.pending', 'agent.approval.decided'].every((t) => receiver.events().some((e) => e.type === t)),
    );
    const body = JSON.stringify(receiver.events().filter((e) => e.type.startsWith('agent.')));
    expect(body).not.toMatch(/eyJ|org-agent-lead/); // no tokens, no user ids
    expect(await json(await api.fetch('/api/v1/webhooks/event-types', { token: a.human }))).toBeDefined();
  });

  test('a budget amendment that settles is one amendment.completed event; a refused amendment request writes none', async () => {
    await subscribe('org-amend', ['amendment.completed']);
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], 'org-amend', {
      endDate: '2099-03-31',
    });
    const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    const amend = (body: unknown) =>
      api.fetch(`/api/v1/campaigns/${launched.campaignId}/amendments`, {
        method: 'POST',
        token: launched.token,
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
    // A stale version is refused before anything is asked: no amendment, no event.
    expect(
      (await amend({ expectedVersion: booking.version + 5, lines: [{ lineId: booking.lines[0]!.id, budgetMinor: 9_000 }] })).status,
    ).toBe(409);
    const res = await amend({ expectedVersion: booking.version, lines: [{ lineId: booking.lines[0]!.id, budgetMinor: 9_000 }] });
    expect(res.status).toBe(202);
    const { amendment } = await json<{ amendment: { id: string } }>(res);
    await until('the amendment settles', async () => (await eventsOf('amendment.completed')).length > 0);
    const events = await eventsOf('amendment.completed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ workspace_id: 'org-amend', subject_type: 'amendment', subject_id: amendment.id });
    expect(events[0].body).toMatchObject({ amendmentId: amendment.id, bookingId: booking.id, status: 'applied' });
    expect((await env.db('booking_amendments').where({ id: amendment.id }).first()).status).toBe('applied');
  });

  test("a supplier's creative review that ends is one creative.review.completed event, with the creative and its outcome", async () => {
    await subscribe('org-review', ['creative.review.completed']);
    const token = await env.issuer.token({ org: 'org-review', user: 'designer' });
    const creative = await makeCreative(api, token, 'ctv');
    const res = await post(api, token, `/api/v1/creatives/${creative.id}/submit`, { adapterKey: 'sandbox-ctv', channel: 'ctv' });
    expect(res.status).toBe(202);
    await until('the review ends', async () => (await eventsOf('creative.review.completed')).length > 0);
    const [event, ...more] = await eventsOf('creative.review.completed');
    expect(more).toHaveLength(0);
    const review = await env.db('creative_reviews').where({ creative_id: creative.id }).first();
    expect(event).toMatchObject({ workspace_id: 'org-review', subject_type: 'creative_review', subject_id: review.id });
    expect(event.body).toMatchObject({ reviewId: review.id, creativeId: creative.id, adapterKey: 'sandbox-ctv', status: review.status });
    expect(['approved', 'rejected']).toContain(review.status);
  });
});
