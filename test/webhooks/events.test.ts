import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { actors, approvedCampaign, approvedLaunch, prepare } from '../agent/support';
import { makeCreative } from '../support/creatives';
import { until } from '../support/wait';
import { randomUUID } from 'node:crypto';
import { WebhookReceiver } from '../support/webhook-receiver';
import { subscribe as subscribeTo } from '../support/webhooks';

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

const subscribe = (org: string, eventTypes: string[]) => subscribeTo(env, api, org, eventTypes, receiver.url);
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
    // Both are in the catalogue a person subscribes from, about the subject they were written with.
    const catalogue = await json<{ eventTypes: Array<{ type: string; subject: string }> }>(
      await api.fetch('/api/v1/webhooks/event-types', { token: a.human }),
    );
    const subjects = new Map(catalogue.eventTypes.map((e) => [e.type, e.subject]));
    for (const e of [...pending, ...decided]) expect(subjects.get(e.type)).toBe(e.subject_type);
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

describe("booking events become webhook events, a statement's at a time", () => {
  const moves = (bookingId: string) =>
    env
      .db('booking_events')
      .where({ booking_id: bookingId })
      .andWhere((q) =>
        q.where({ action: 'booking.status-changed' }).orWhereRaw(`line_id is not null and (detail->>'from') <> (detail->>'to')`),
      )
      .orderBy('seq');
  /** A three-line sandbox launch, waited for until the booking is confirmed. */
  async function confirmedThreeLines(org: string) {
    const lines = ['ctv', 'audio', 'dooh'].map((channel) => ({ channel, adapterKey: `sandbox-${channel}`, budgetMinor: 10_000 }));
    const launched = await launchPlan(env, api, lines, org);
    await waitForBooking(api, launched.token, launched.booking.id, (b) => b.status === 'confirmed');
    return launched;
  }
  const eventsFor = (org: string) => env.db('webhook_events').where({ workspace_id: org }).whereLike('type', 'booking.%').orderBy('seq');

  test("a three-line launch's moves are one event each, in the order written, with the versions they made, each delivered once", async () => {
    await subscribe('org-moves', ['booking.status_changed', 'booking.line.status_changed']);
    const launched = await confirmedThreeLines('org-moves');
    const bookingId = launched.booking.id;

    const written = await moves(bookingId);
    const events = await eventsFor('org-moves');
    // queued → in-progress → confirmed for each line, and the booking's own status changes.
    expect(written.filter((m) => m.line_id)).toHaveLength(6);
    expect(events.map((e) => [e.subject_id, e.body.from, e.body.to])).toEqual(
      written.map((m) => [m.line_id ?? bookingId, m.detail.from, m.detail.to]),
    );
    for (const e of events) {
      expect(e.type).toBe(e.subject_type === 'booking' ? 'booking.status_changed' : 'booking.line.status_changed');
      expect(e.body).toMatchObject({ bookingId, campaignId: launched.campaignId });
    }
    // Each line's last event carries the line's version now; a line's versions only go up.
    const lines = await env.db('booking_lines').where({ booking_id: bookingId });
    for (const line of lines) {
      const versions = events.filter((e) => e.subject_id === line.id).map((e) => e.subject_version);
      expect(versions.at(-1)).toBe(line.version);
      expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    }
    const deliveries = await env.db('webhook_deliveries').whereIn(
      'event_id',
      events.map((e) => e.id),
    );
    expect(deliveries).toHaveLength(events.length);
    const jobs = await env.db('outbox').whereIn(
      'job_id',
      deliveries.map((d) => `webhook-${d.id}-0`),
    );
    expect(jobs).toHaveLength(events.length);
    await until('all delivered', async () => events.every((e) => receiver.events().some((r) => r.id === e.id)));
  });

  test('of the events one statement writes, only status moves and booking status changes are told, in their order', async () => {
    await subscribe('org-rows', ['booking.line.status_changed', 'booking.status_changed']);
    const launched = await confirmedThreeLines('org-rows');
    const bookingId = launched.booking.id;
    const [a, b, c] = await env.db('booking_lines').where({ booking_id: bookingId }).orderBy('position');
    const before = (await eventsFor('org-rows')).length;
    const row = (lineId: string | null, action: string, detail: Record<string, unknown>) => ({
      id: randomUUID(),
      booking_id: bookingId,
      line_id: lineId,
      action,
      actor_id: 'ops-1',
      actor: 'operator',
      source: 'console',
      detail: JSON.stringify(detail),
    });
    // One statement: a move, a note with no move, a move to where it was, a booking change, another move.
    await env
      .db('booking_events')
      .insert([
        row(c!.id, 'line.reconciled', { from: 'confirmed', to: 'rejected' }),
        row(a!.id, 'line.note', { note: 'checked' }),
        row(b!.id, 'line.touched', { from: 'confirmed', to: 'confirmed' }),
        row(null, 'booking.status-changed', { from: 'confirmed', to: 'partially-confirmed' }),
        row(a!.id, 'line.reconciled', { from: 'confirmed', to: 'cancelled' }),
      ]);
    const added = (await eventsFor('org-rows')).slice(before);
    expect(added.map((e) => [e.type, e.subject_id, e.body.to])).toEqual([
      ['booking.line.status_changed', c!.id, 'rejected'],
      ['booking.status_changed', bookingId, 'partially-confirmed'],
      ['booking.line.status_changed', a!.id, 'cancelled'],
    ]);
    expect(added[1]).toMatchObject({
      subject_type: 'booking',
      subject_version: (await env.db('bookings').where({ id: bookingId }).first()).version,
    });
    const delivered = await env.db('webhook_deliveries').whereIn(
      'event_id',
      added.map((e) => e.id),
    );
    expect(delivered.map((d) => d.subject_id).sort()).toEqual([a!.id, bookingId, c!.id].sort());
  });

  test('an event no enabled subscription wants is not kept; from the moment one wants it, it is', async () => {
    const org = 'org-unwanted';
    // Another type, and the wanted type on a paused subscription: neither wants a line's move.
    await subscribe(org, ['campaign.paused']);
    const paused = await subscribeTo(env, api, org, ['booking.line.status_changed']);
    const owner = await env.issuer.token({ org, user: `${org}-owner` });
    expect((await post(api, owner, `/api/v1/webhooks/subscriptions/${paused.id}`, { enabled: false }, 'PATCH')).status).toBe(200);
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], org);
    await waitForBooking(api, launched.token, launched.booking.id, (b) => b.status === 'confirmed');
    expect(await moves(launched.booking.id)).not.toHaveLength(0);
    expect(await eventsFor(org)).toHaveLength(0);
    expect(await env.db('webhook_deliveries').where({ subscription_id: paused.id })).toHaveLength(0);

    // Enabled again: the next move is kept, and delivered to it.
    expect((await post(api, owner, `/api/v1/webhooks/subscriptions/${paused.id}`, { enabled: true }, 'PATCH')).status).toBe(200);
    const [line] = launched.booking.lines;
    const movedBefore = (await moves(launched.booking.id)).length;
    const res = await post(api, launched.token, `/api/v1/campaigns/${launched.campaignId}/pause`);
    expect(res.status).toBe(202);
    await until('the line is stopped', async () => (await env.db('booking_lines').where({ id: line!.id }).first()).status === 'stopped');
    const lineMoves = (await moves(launched.booking.id)).slice(movedBefore).filter((m) => m.line_id);
    const kept = await eventsFor(org);
    expect(kept.map((e) => [e.subject_id, e.body.to])).toEqual(lineMoves.map((m) => [m.line_id, m.detail.to]));
    expect(kept.at(-1)!.body.to).toBe('stopped');
    expect(await env.db('webhook_deliveries').where({ subscription_id: paused.id })).toHaveLength(kept.length);
  });
});
