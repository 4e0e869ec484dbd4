import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { addDays, dateOnly } from '../../shared/dates';
import { sandboxClock } from '../../shared/workspaces/sandbox-clock';
import type { LineAtSupplier } from '../../shared/adapters/adapter';
import { ADAPTER_IMPLEMENTATIONS } from '../../workers/adapters/registry';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ WORKER_QUEUES: 'suppliers' });
});
afterAll(() => env.close());

const ORG = 'org-obey';
const today = dateOnly(new Date());
const flight = { startDate: today, endDate: addDays(today, 9) };

/** What the sandbox supplier reports for a line over its whole flight, as of the workspace's clock now. */
async function reported(b: BookingBody, lineId: string, to = addDays(today, 20)) {
  const line = b.lines.find((l) => l.id === lineId)!;
  const atSupplier: LineAtSupplier = {
    bookingId: b.id,
    lineId,
    channel: line.channel,
    executionMode: 'sandbox',
    channelCampaignId: line.channelCampaignId,
    providerReference: line.providerReference,
    bookingAttemptId: line.providerAttemptId,
    budgetMinor: line.budgetMinor,
    ...flight,
  };
  const { now } = await sandboxClock(env.db, ORG);
  const reporter = ADAPTER_IMPLEMENTATIONS.get(line.adapterKey)!.reporter!;
  const report = await reporter.delivery(atSupplier, flight.startDate, to, { db: env.db, sandboxSlowMs: 0, now });
  return report.days.filter((d) => d.date <= flight.endDate).map((d) => ({ date: d.date, spendMinor: d.spendMinor }));
}
const total = (days: Array<{ spendMinor: number }>) => days.reduce((s, d) => s + d.spendMinor, 0);

async function control(token: string, b: BookingBody, lineId: string, op: 'pause' | 'stop') {
  const line = (await readBooking(api, token, b.id)).lines.find((l) => l.id === lineId)!;
  const res = await post(api, token, `/api/v1/bookings/${b.id}/lines/${lineId}/${op}`, { expectedVersion: line.version });
  expect([op, res.status]).toEqual([op, 202]);
}
async function advance(token: string, days: number) {
  expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days })).status).toBe(200);
}
const settled = (b: BookingBody) => b.lines.every((l) => !(l as { pendingOperation?: string | null }).pendingOperation);

describe('the sandbox supplier honours every operation from its effective day, and two triggers misbehave on purpose', () => {
  test('pause and stop end delivery (…78 keeps delivering); a budget change applies from its day and never rewrites a reported day (…79 ignores it)', async () => {
    const launched = await launchPlan(
      env,
      api,
      [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 100_000 },
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 100_078 },
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 100_000 },
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 100_079 },
      ],
      ORG,
      { ...flight, maximumCommitmentMinor: 600_000 },
    );
    const { token } = launched;
    let b = await waitForBooking(api, token, launched.booking.id, (x) => x.lines.every((l) => l.status === 'confirmed'));
    const [paused, ignoresPause, raised, ignoresBudget] = b.lines.map((l) => l.id) as [string, string, string, string];
    // Nothing is reported for a day that is not over.
    expect(await reported(b, paused)).toEqual([]);

    // Two days delivered; then pause two lines and raise two budgets, on the third day.
    await advance(token, 2);
    const raisedBefore = await reported(b, raised);
    expect(raisedBefore.map((d) => d.date)).toEqual([today, addDays(today, 1)]);
    await control(token, b, paused, 'pause');
    await control(token, b, ignoresPause, 'pause');
    b = await waitForBooking(api, token, b.id, settled);
    const amended = await api.fetch(`/api/v1/campaigns/${launched.campaignId}/amendments`, {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        expectedVersion: b.version,
        lines: [
          { lineId: raised, budgetMinor: 150_000 },
          { lineId: ignoresBudget, budgetMinor: 150_079 },
        ],
      }),
    });
    expect(amended.status).toBe(202);
    b = await waitForBooking(api, token, b.id, (x) => settled(x) && x.lines.find((l) => l.id === raised)!.budgetMinor === 150_000);

    // Three days paused, then stopped for good; the clock runs past the flight.
    await advance(token, 3);
    // Paused on the third day: nothing after the two days before it.
    expect((await reported(b, paused)).map((d) => d.date)).toEqual([today, addDays(today, 1)]);
    // The pause …78 ignored is caught by its delivery (docs/bookings.md, "Verified control"): a person takes it.
    b = await waitForBooking(api, token, b.id, (x) => x.lines.find((l) => l.id === ignoresPause)!.status === 'reconciliation-required');
    expect((b.lines.find((l) => l.id === ignoresPause) as { verification?: { state: string } }).verification).toMatchObject({
      state: 'failed',
    });
    await control(token, b, paused, 'stop');
    b = await waitForBooking(api, token, b.id, settled);
    await advance(token, 10);

    const pausedDays = await reported(b, paused);
    expect(pausedDays.map((d) => d.date)).toEqual([today, addDays(today, 1)]);
    expect(pausedDays.every((d) => d.spendMinor > 0)).toBe(true);
    // …78 delivered through its pause, its whole budget.
    const misbehaved = await reported(b, ignoresPause);
    expect(misbehaved).toHaveLength(10);
    expect(total(misbehaved)).toBe(100_078);
    // The raised line: its reported days as they were, the new budget from the change's day on.
    const raisedAfter = await reported(b, raised);
    expect(raisedAfter.slice(0, 2)).toEqual(raisedBefore);
    expect(raisedAfter).toHaveLength(10);
    expect(total(raisedAfter)).toBe(150_000);
    // …79 kept its booked budget.
    expect(total(await reported(b, ignoresBudget))).toBe(100_079);
  });
});
