import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { pollSupplier } from '../support/delivery-poll';
import { flightSpend } from '../../workers/adapters/sandbox-delivery';
import { findAdapter } from '../../shared/adapters/catalogue';
import { addDays } from '../../shared/dates';
import { recordDelivery } from '../../shared/delivery/delivery-store';
import type { CampaignDelivery } from '../../shared/delivery/campaign-delivery';
import { day } from './support';

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
const operations = (lineId: string) =>
  env.db('line_operations').where({ line_id: lineId }).orderBy('created_at').select('kind', 'requested_by');
const CAP = 6_000;
const BUDGET = 140_000;

test('the same capped line on a supplier that caps natively and on one that cannot: the first is never paused and never spends past its cap, the second is paused at its cap and resumed each next day, its overspend shown', async () => {
  expect([findAdapter('sandbox-search')!.capsNatively, findAdapter('sandbox-ctv')!.capsNatively]).toEqual([true, false]);
  const org = 'org-capnative';
  const l = await launchPlan(
    env,
    api,
    [
      { channel: 'search', adapterKey: 'sandbox-search', budgetMinor: BUDGET, dailyCapMinor: CAP },
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: BUDGET, dailyCapMinor: CAP },
    ],
    org,
    { startDate: today, endDate: addDays(today, 13) },
  );
  const { token, campaignId } = l;
  const booking = await waitForBooking(api, token, l.booking.id, (b) => b.lines.every((x) => x.status === 'confirmed'));
  const [native, engine] = [booking.lines[0]!, booking.lines[1]!];
  // Uncapped, both lines' curves plan more than the cap on every one of these days: the cap binds.
  expect(flightSpend(native.id, today, addDays(today, 13), BUDGET).every((d) => d.spendMinor > CAP)).toBe(true);

  // Two days: each supplier reports the day so far in the afternoon; the clock then moves to the next day.
  for (const [i, engineSoFar] of [6_200, 6_300].entries()) {
    const date = addDays(today, i);
    await env.db.transaction((trx) =>
      recordDelivery(
        trx,
        [
          // The native supplier stops at the cap; the other spends on past it until it is told to pause.
          {
            line: { lineId: native.id, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(date, CAP)] },
          },
          {
            line: { lineId: engine.id, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(date, engineSoFar)] },
          },
        ],
        { kind: 'supplier' },
      ),
    );
    await poll('sandbox-search', org);
    await poll('sandbox-ctv', org);
    const paused = await waitForBooking(api, token, booking.id, (b) => b.lines[1]!.status === 'stopped');
    expect(paused.lines[0]!.status).toBe('confirmed');
    expect(paused.lines[1]!.stop).toMatchObject({ kind: 'pause', by: 'flightdeck' });

    expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 1 })).status).toBe(200);
    await poll('sandbox-ctv', org);
    await waitForBooking(api, token, booking.id, (b) => b.lines[1]!.status === 'confirmed');
  }

  // In flight, the native line's cap is raised: the supplier learns it at its next delivery call and holds the day to it.
  const { campaign } = await json<{ campaign: { version: number } }>(await api.fetch(`/api/v1/campaigns/${campaignId}`, { token }));
  const lowered = await api.fetch(`/api/v1/campaigns/${campaignId}/daily-caps`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ expectedVersion: campaign.version, lines: [{ lineId: native.id, dailyCapMinor: 8_000 }] }),
  });
  expect(lowered.status).toBe(200);
  await poll('sandbox-search', org);
  expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 1 })).status).toBe(200);
  await poll('sandbox-search', org);
  await poll('sandbox-ctv', org);

  // Native: no pause or resume was ever asked of it; the supplier heard of its cap at booking and once since.
  expect(await operations(native.id)).toEqual([]);
  expect(
    (await env.db('sandbox_ledger').where({ line_id: native.id }).orderBy('id').select('operation', 'request')).map((r) => [
      r.operation,
      (r.request as { dailyCapMinor?: number }).dailyCapMinor,
    ]),
  ).toEqual([
    ['book', CAP],
    ['daily-cap', 8_000],
  ]);
  // Engine: paused at the cap and resumed at each next day's start, each a verified operation at the supplier.
  expect((await operations(engine.id)).map((o) => [o.kind, o.requested_by])).toEqual([
    ['pause', 'flightdeck'],
    ['resume', 'flightdeck'],
    ['pause', 'flightdeck'],
    ['resume', 'flightdeck'],
  ]);
  expect(
    (await env.db('sandbox_ledger').where({ line_id: engine.id }).whereIn('operation', ['pause', 'resume']).orderBy('id')).map(
      (r) => r.operation,
    ),
  ).toEqual(['pause', 'resume', 'pause', 'resume']);

  const d = (await json<{ delivery: CampaignDelivery }>(await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token }))).delivery;
  const lineOf = (id: string) => d.lines.find((x) => x.lineId === id)!;
  const spend = (id: string) =>
    lineOf(id)
      .days.filter((x) => x.date <= addDays(today, 2))
      .map((x) => [x.date, x.spendMinor, x.overCapMinor]);
  // Every day the native supplier reported is at most its cap in force that day, and the line is never over it.
  expect(spend(native.id)).toEqual([
    [today, CAP, 0],
    [addDays(today, 1), CAP, 0],
    [addDays(today, 2), 8_000, 0],
  ]);
  expect(lineOf(native.id).overCapMinor).toBe(0);
  // The engine's line: what it spent past the cap before the pause took hold is shown, day by day; and
  // on a day whose figure arrived only after it, the engine could not act, so the whole overspend shows.
  const engineDays = spend(engine.id);
  expect(engineDays.slice(0, 2)).toEqual([
    [today, 6_200, 200],
    [addDays(today, 1), 6_300, 300],
  ]);
  expect(engineDays[2]![2]).toBe((engineDays[2]![1] as number) - CAP);
  expect(engineDays[2]![2]).toBeGreaterThan(0);
  expect(lineOf(engine.id).overCapMinor).toBe(lineOf(engine.id).days.reduce((s, x) => s + x.overCapMinor, 0));
  expect(lineOf(engine.id).overCapMinor).toBeGreaterThan(500);
});
