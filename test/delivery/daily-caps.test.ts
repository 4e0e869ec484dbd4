import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, launchPlan, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { pollSupplier } from '../support/delivery-poll';
import { addDays } from '../../shared/dates';
import { recordDelivery } from '../../shared/delivery/delivery-store';
import { enforceDailyCaps } from '../../shared/delivery/cap-guard';
import type { CampaignDelivery } from '../../shared/delivery/campaign-delivery';
import { day } from './support';
import { actors, DIGEST, prepare, STEP, type Prepared } from '../agent/support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const poll = (adapterKey: string, advertiserId: string) => pollSupplier(env.db, adapterKey, { advertiserId });
const today = new Date().toISOString().slice(0, 10);

const setCaps = (token: string, campaignId: string, body: unknown, key = randomUUID()) =>
  api.fetch(`/api/v1/campaigns/${campaignId}/daily-caps`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
const campaignOf = async (token: string, id: string) =>
  (await json<{ campaign: { version: number; dailyCapMinor: number | null } }>(await api.fetch(`/api/v1/campaigns/${id}`, { token })))
    .campaign;
const capsOf = (b: BookingBody) => b.lines.map((l) => (l as unknown as { dailyCapMinor: number | null }).dailyCapMinor);
const operations = (lineId: string) =>
  env.db('line_operations').where({ line_id: lineId }).orderBy('created_at').select('kind', 'requested_by', 'status', 'note');

/** A sandbox campaign of two weeks from today: a CTV line capped at planning, an audio line not. */
async function launched(org: string, campaignCap?: number) {
  const l = await launchPlan(
    env,
    api,
    [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 140_000, dailyCapMinor: 6_000 },
      { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 140_000 },
    ],
    org,
    { startDate: today, endDate: addDays(today, 13), ...(campaignCap ? { dailyCapMinor: campaignCap } : {}) },
  );
  const booking = await waitForBooking(api, l.token, l.booking.id, (b) => b.lines.every((x) => x.status === 'confirmed'));
  return { ...l, booking, ctv: booking.lines[0]!, audio: booking.lines[1]! };
}

describe('daily caps: set at planning, changed in flight', () => {
  test('caps set at planning reach the booked lines; a change is one governed write at the campaign version; bad changes are refused and change nothing', async () => {
    const org = 'org-cap1';
    const { token, campaignId, booking, ctv, audio } = await launched(org, 30_000);
    expect(capsOf(booking)).toEqual([6_000, null]);
    // A line's cap over its budget is refused at planning.
    await expect(
      draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 5_000, dailyCapMinor: 5_001 }]),
    ).rejects.toThrow(/plan failed: 400 .*daily_cap_over_budget/);
    const before = await campaignOf(token, campaignId);
    expect(before.dailyCapMinor).toBe(30_000);

    const refusals: Array<[unknown, number, string]> = [
      [{ expectedVersion: before.version, lines: [{ lineId: ctv.id, dailyCapMinor: 5_000 }], extra: 1 }, 400, 'validation_failed'],
      [{ expectedVersion: before.version }, 400, 'validation_failed'],
      [{ expectedVersion: before.version, lines: [{ lineId: ctv.id, dailyCapMinor: 0 }] }, 400, 'validation_failed'],
      [{ expectedVersion: before.version, lines: [{ lineId: randomUUID(), dailyCapMinor: 5_000 }] }, 400, 'line_not_in_campaign'],
      [{ expectedVersion: before.version, lines: [{ lineId: ctv.id, dailyCapMinor: 140_001 }] }, 400, 'daily_cap_over_budget'],
      [{ expectedVersion: before.version + 1, dailyCapMinor: 20_000 }, 409, 'version_conflict'],
    ];
    for (const [body, status, code] of refusals) {
      const res = await setCaps(token, campaignId, body);
      expect([res.status, (await json<{ code: string }>(res)).code]).toEqual([status, code]);
    }
    // Another workspace's campaign is not found; an agent must go through the governed action.
    const stranger = await env.issuer.token({ org: 'org-cap-other', user: 'eve' });
    expect((await setCaps(stranger, campaignId, { expectedVersion: before.version, dailyCapMinor: 1 })).status).toBe(404);
    const agent = await env.issuer.token({ org, user: `${org}-buyer`, agent: 'planner-bot' });
    expect((await setCaps(agent, campaignId, { expectedVersion: before.version, dailyCapMinor: 1 })).status).toBe(403);
    expect(await campaignOf(token, campaignId)).toMatchObject({ version: before.version, dailyCapMinor: 30_000 });
    expect(capsOf(await readBooking(api, token, booking.id))).toEqual([6_000, null]);

    const changed = await setCaps(token, campaignId, {
      expectedVersion: before.version,
      dailyCapMinor: null,
      lines: [{ lineId: audio.id, dailyCapMinor: 8_000 }],
      note: 'hold audio back',
    });
    expect(changed.status).toBe(200);
    expect((await json<{ timeZone: string; campaign: { version: number } }>(changed)).campaign.version).toBe(before.version + 1);
    expect(await campaignOf(token, campaignId)).toMatchObject({ version: before.version + 1, dailyCapMinor: null });
    const after = await readBooking(api, token, booking.id);
    expect(capsOf(after)).toEqual([6_000, 8_000]);
    expect(after.events.filter((e) => e.action === 'line.daily-cap-changed')).toEqual([
      expect.objectContaining({
        lineId: audio.id,
        actor: 'human',
        detail: { from: null, to: 8_000, timeZone: 'UTC', note: 'hold audio back' },
      }),
    ]);
  });
});

test('an agent changes caps only as a governed action: prepared at no spend, approved by a person, executed with the bound step', async () => {
  const a = await actors(env, api, 'org-cap4', { allowedActions: ['campaign.cap'], budgetCeilingMinor: 0, currency: 'GBP' });
  const { token, campaignId, ctv, booking } = await launched(a.org);
  const { version } = await campaignOf(token, campaignId);
  const body = { expectedVersion: version, lines: [{ lineId: ctv.id, dailyCapMinor: 4_000 }] };
  const res = await prepare(api, a.agent, 'campaign.cap', { campaignId, ...body }, 0);
  expect(res.status).toBe(201);
  const p = await json<Prepared>(res);
  expect(p.commitment).toMatchObject({ budgetMinor: 0, policy: 'zero' });
  const ok = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
  const { executeStep } = await json<{ executeStep: { id: string } }>(ok);
  const run = await api.fetch(`/api/v1/campaigns/${campaignId}/daily-caps`, {
    method: 'POST',
    token: a.agent,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), [STEP]: executeStep.id, [DIGEST]: p.actionDigest },
    body: JSON.stringify(body),
  });
  expect(run.status).toBe(200);
  const after = await readBooking(api, token, booking.id);
  expect(capsOf(after)).toEqual([4_000, null]);
  expect(after.events.find((e) => e.action === 'line.daily-cap-changed')).toMatchObject({
    actor: 'agent',
    detail: { from: 6_000, to: 4_000 },
  });
});

describe('daily caps enforced through the engine on the sandbox clock', () => {
  test("a line whose day reaches its cap is paused (one operation, however many guards run), and resumed at the next day's start; the day's spend past the cap reported late is shown", async () => {
    const org = 'org-cap2';
    const { token, campaignId, booking, ctv, audio } = await launched(org);
    // The supplier reports the day so far: 6,200 by the afternoon, past the line's 6,000 cap.
    await env.db.transaction((trx) =>
      recordDelivery(
        trx,
        [
          {
            line: { lineId: ctv.id, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(today, 6_200)] },
          },
        ],
        {
          kind: 'supplier',
        },
      ),
    );
    // Guards running at once (several pollers) ask for one pause.
    const results = await Promise.all(Array.from({ length: 5 }, () => enforceDailyCaps(env.db, { advertiserId: org })));
    expect(results.reduce((s, r) => s + r.paused.length, 0)).toBe(1);
    await poll('sandbox-ctv', org);
    expect(await operations(ctv.id)).toEqual([expect.objectContaining({ kind: 'pause', requested_by: 'flightdeck' })]);
    expect((await operations(ctv.id))[0]!.note).toMatch(/Daily cap reached: 6200 of the line's 6000 spent on/);
    const paused = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'stopped');
    expect(paused.lines[0]!.stop).toMatchObject({ kind: 'pause', by: 'flightdeck' });
    // The uncapped line runs on; the supplier was asked once, through the same operation a person's pause is.
    expect(paused.lines[1]!.status).toBe('confirmed');
    expect(await operations(audio.id)).toEqual([]);
    expect(await env.db('sandbox_ledger').where({ line_id: ctv.id, operation: 'pause' }).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(paused.events.find((e) => e.action === 'line.pause-requested' && e.lineId === ctv.id)).toMatchObject({ actor: 'system' });

    // Still the same day: nothing more.
    await poll('sandbox-ctv', org);
    expect(await operations(ctv.id)).toHaveLength(1);

    // The next day starts on the clock: the cap resumes the line it paused.
    expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 1 })).status).toBe(200);
    await poll('sandbox-ctv', org);
    expect((await operations(ctv.id)).map((o) => [o.kind, o.requested_by])).toEqual([
      ['pause', 'flightdeck'],
      ['resume', 'flightdeck'],
    ]);
    const resumed = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed');
    expect(resumed.lines[0]!.stop).toBeNull();
    expect(await env.db('booking_lines').where({ id: ctv.id }).first('cap_paused_on')).toEqual({ cap_paused_on: null });

    // The day's full figure arrived after it: what it spent past the cap is shown on the day and the line.
    const res = await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token });
    const d = (await json<{ delivery: CampaignDelivery }>(res)).delivery;
    const line = d.lines.find((l) => l.lineId === ctv.id)!;
    const first = line.days.find((x) => x.date === today)!;
    expect(line.dailyCapMinor).toBe(6_000);
    expect(first.overCapMinor).toBe(Math.max(0, first.spendMinor - 6_000));
    expect(first.overCapMinor).toBeGreaterThan(0);
    expect(line.overCapMinor).toBe(line.days.reduce((s, x) => s + x.overCapMinor, 0));
    expect(d.lines.find((l) => l.lineId === audio.id)!.overCapMinor).toBe(0);

    // The cap lowered on the second day holds from that day: the first day keeps the cap it had.
    const tomorrow = addDays(today, 1);
    const { version } = await campaignOf(token, campaignId);
    const lowered = await setCaps(token, campaignId, { expectedVersion: version, lines: [{ lineId: ctv.id, dailyCapMinor: 1_000 }] });
    expect(lowered.status).toBe(200);
    await env.db.transaction((trx) =>
      recordDelivery(
        trx,
        [
          {
            line: { lineId: ctv.id, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(tomorrow, 3_000)] },
          },
        ],
        { kind: 'supplier' },
      ),
    );
    const again = (
      await json<{ delivery: CampaignDelivery }>(await api.fetch(`/api/v1/campaigns/${campaignId}/delivery?to=${tomorrow}`, { token }))
    ).delivery;
    const capped = again.lines.find((l) => l.lineId === ctv.id)!;
    expect(capped.dailyCapMinor).toBe(1_000);
    expect(capped.days.find((x) => x.date === today)!.overCapMinor).toBe(first.overCapMinor);
    expect(capped.days.find((x) => x.date === tomorrow)!.overCapMinor).toBe(2_000);
    expect(capped.overCapMinor).toBe(first.overCapMinor + 2_000);
  });

  test("a campaign's cap pauses all its running lines when they reach it together, and resumes them the next day; a line a person paused stays paused", async () => {
    const org = 'org-cap3';
    const { token, campaignId, booking, ctv, audio } = await launched(org, 12_000);
    // Each line under its own cap, together past the campaign's.
    await env.db.transaction((trx) =>
      recordDelivery(
        trx,
        [
          {
            line: { lineId: ctv.id, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(today, 5_000)] },
          },
          {
            line: { lineId: audio.id, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(today, 7_500)] },
          },
        ],
        { kind: 'supplier' },
      ),
    );
    expect((await enforceDailyCaps(env.db, { advertiserId: org })).paused.sort()).toEqual([ctv.id, audio.id].sort());
    const paused = await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'stopped'));
    // A person resumes the audio line, then pauses it for a reason of their own.
    const audioLine = paused.lines[1]!;
    expect(
      (await post(api, token, `/api/v1/bookings/${booking.id}/lines/${audio.id}/resume`, { expectedVersion: audioLine.version })).status,
    ).toBe(202);
    const back = await waitForBooking(api, token, booking.id, (b) => b.lines[1]!.status === 'confirmed');
    // Resumed by a person on the capped day: the cap leaves it be that day.
    expect((await enforceDailyCaps(env.db, { advertiserId: org })).paused).toEqual([]);
    expect(
      (await post(api, token, `/api/v1/bookings/${booking.id}/lines/${audio.id}/pause`, { expectedVersion: back.lines[1]!.version }))
        .status,
    ).toBe(202);
    await waitForBooking(api, token, booking.id, (b) => b.lines[1]!.status === 'stopped');
    // Before the new day's guard: the line the cap paused is expected back (its outlook runs on), the one a person paused is not.
    const outlooks = (await json<{ delivery: CampaignDelivery }>(await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token })))
      .delivery.lines;
    expect(outlooks.map((l) => l.outlook.basis)).toEqual(['plan', 'idle']);

    expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 1 })).status).toBe(200);
    expect((await enforceDailyCaps(env.db, { advertiserId: org })).resumed).toEqual([ctv.id]);
    const next = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed');
    expect(next.lines[1]).toMatchObject({ status: 'stopped', stop: { kind: 'pause', by: `${org}-buyer` } });
  });
});
