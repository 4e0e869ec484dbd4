import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { addDays, daysFrom } from '../../shared/dates';
import { monthsBefore } from '../../shared/wallet/fees';
import { advanceSandboxClock } from '../../shared/workspaces/sandbox-clock';
import type { CampaignDelivery } from '../../shared/delivery/campaign-delivery';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const today = new Date().toISOString().slice(0, 10);
const thisMonth = today.slice(0, 7);
const nextMonth = monthsBefore(thisMonth, -1);
const nextMonthStarts = `${nextMonth}-01`;

interface Summary {
  period: string;
  mediaSpendMinor: number;
  deliveredSpendMinor: number;
  sandbox: { deliveredSpendMinor: number; managementFeesMinor: number };
}

const summary = (token: string, query = '', on: TestApi = api) => on.fetch(`/api/v1/billing/summary${query}`, { token });
const read = async (token: string, query = '', on: TestApi = api) => {
  const res = await summary(token, query, on);
  expect(res.status).toBe(200);
  return (await json<{ summary: Summary }>(res)).summary;
};
const problem = async (res: Response) => {
  expect(res.status).toBe(400);
  return json<{ code: string; detail: string }>(res);
};

// A flight across the month boundary, from three days before it (or today, at the end of a month:
// a flight that has started delivers only its remaining days).
const flightStart = addDays(nextMonthStarts, -3) > today ? addDays(nextMonthStarts, -3) : today;
const flightDays = daysFrom(flightStart, addDays(nextMonthStarts, 2)) + 1;

describe('the billing summary on a workspace’s sandbox clock', () => {
  test('a clock moved into the next month makes that month the default and readable; each month shows the days delivered in it', async () => {
    // A sandbox flight across the month boundary: days in this month and in the next.
    const { token, booking, campaignId } = await launchPlan(
      env,
      api,
      [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 60_000 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 30_000 },
      ],
      'org-clocked',
      { startDate: flightStart, endDate: addDays(nextMonthStarts, 2) },
    );
    await waitForBooking(api, token, booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));

    // Before the clock moves, next month has not started for this workspace either.
    expect((await read(token)).period).toBe(thisMonth);
    const early = await problem(await summary(token, `?period=${nextMonth}`));
    expect(early.detail).toContain(`ask for ${thisMonth}`);

    // The clock moves through the API to the day after the flight; the move asks the workers to deliver the days passed.
    const moved = await post(api, token, '/api/v1/sandbox/clock/advance', { days: daysFrom(today, addDays(nextMonthStarts, 3)) });
    expect(moved.status).toBe(200);
    const deadline = Date.now() + 20_000;
    let delivery: CampaignDelivery;
    for (;;) {
      const res = await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token });
      delivery = (await json<{ delivery: CampaignDelivery }>(res)).delivery;
      if (delivery.lines.every((l) => l.days.length === flightDays) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(delivery.lines.map((l) => l.days.length)).toEqual([flightDays, flightDays]);
    const spentIn = (month: string) =>
      delivery.lines.flatMap((l) => l.days).reduce((s, d) => (d.date.startsWith(month) ? s + d.spendMinor : s), 0);
    expect(spentIn(thisMonth)).toBeGreaterThan(0);
    expect(spentIn(nextMonth)).toBeGreaterThan(0);
    expect(spentIn(thisMonth) + spentIn(nextMonth)).toBe(90_000);

    // Its clock's month is now the default, and what the sandbox delivered on its days is there.
    const clocked = await read(token);
    expect(clocked).toMatchObject({ period: nextMonth, mediaSpendMinor: 0, deliveredSpendMinor: 0 });
    expect(clocked.sandbox).toEqual({
      deliveredSpendMinor: spentIn(nextMonth),
      managementFeesMinor: Math.floor((spentIn(nextMonth) * 10 + 50) / 100),
    });
    expect(await read(token, `?period=${nextMonth}`)).toEqual(clocked);
    // This month keeps its own days.
    expect((await read(token, `?period=${thisMonth}`)).sandbox.deliveredSpendMinor).toBe(spentIn(thisMonth));
    // The month after the clock's has not started.
    const beyond = await problem(await summary(token, `?period=${monthsBefore(nextMonth, -1)}`));
    expect(beyond.detail).toContain(`ask for ${nextMonth}`);
  });

  test('a workspace whose clock has not moved is on real time, beside one whose clock has', async () => {
    const moved = await env.issuer.token({ org: 'org-moved', user: 'ann' });
    const still = await env.issuer.token({ org: 'org-still', user: 'bea' });
    expect((await post(api, moved, '/api/v1/sandbox/clock/advance', { days: daysFrom(today, nextMonthStarts) })).status).toBe(200);
    expect((await read(moved)).period).toBe(nextMonth);
    expect((await read(still)).period).toBe(thisMonth);
    expect((await problem(await summary(still, `?period=${nextMonth}`))).code).toBe('validation_failed');
  });

  test('where billing is live, the summary’s month is the real one whatever clock a workspace was left with', async () => {
    const live = await env.api({ BILLING_MODE: 'live', STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' });
    const token = await env.issuer.token({ org: 'org-was-sandbox', user: 'cal' });
    expect((await read(token, '', live)).period).toBe(thisMonth);
    // Live billing refuses to move a clock; one left from sandbox days is set directly.
    await advanceSandboxClock(env.db, 'org-was-sandbox', daysFrom(today, nextMonthStarts), 'test');
    expect((await read(token, '', api)).period).toBe(nextMonth);
    expect((await read(token, '', live)).period).toBe(thisMonth);
    const refused = await problem(await summary(token, `?period=${nextMonth}`, live));
    expect(refused.detail).toContain(`ask for ${thisMonth}`);
  });
});
