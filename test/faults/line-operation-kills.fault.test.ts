import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { approve, bookingStatusOf, draftCampaign, launchPlan, post, sameCounts, SEVEN_CHANNELS } from '../support/bookings';
import { approvedCreative } from '../support/creatives';
import { seeded } from '../support/random';
import { until } from '../support/wait';
import { fundWallet, walletAndLedger } from '../support/wallet';
import type { LineStatus } from '../../shared/bookings/lines/state';
import { SANDBOX_OPERATION_TRIGGERS } from '../../workers/adapters/sandbox';
import { killableFleet, mapLimit, runHousekeepingNow } from './support/fleet';
import { figure } from './support/input-report';

/**
 * 203 running lines (25 sandbox bookings of seven channels, and four live native-staged
 * bookings of seven lines whose wallets move with their amendments) are paused, resumed,
 * amended and stopped while two worker processes are SIGKILLed at random and replaced. No
 * operation may be sent twice, no line may be left waiting in stop-requested, stopping or
 * queued for its operation, every wallet must equal the sum of its entries, and every booking's
 * status must follow from its lines.
 */
const SANDBOX_BOOKINGS = 25;
const LIVE_BOOKINGS = 4;
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const WAITING: LineStatus[] = ['queued', 'in-progress', 'stop-requested', 'stopping'];

test('workers killed while lines are paused, resumed, amended and stopped send nothing twice, strand nothing, and keep every wallet whole', async () => {
  const random = seeded(SEED);
  const fleet = killableFleet(env);
  const started = Date.now();
  fleet.start();
  try {
    // Calm first: every line booked and running (or staged, for the native supplier).
    const sandbox = await mapLimit(Array.from({ length: SANDBOX_BOOKINGS }), 5, (_, i) =>
      launchPlan(
        env,
        api,
        // Some lines' suppliers are slow, refuse or lose their answers to in-flight operations.
        SEVEN_CHANNELS.map((channel, k) => ({
          channel,
          adapterKey: `sandbox-${channel}`,
          budgetMinor: 10_000 + k * 100 + operationTrigger(random),
        })),
        `org-ops-${i % 5}`,
        // Room above the budget for the raises below: no change takes the lines past the maximum commitment.
        { maximumCommitmentMinor: 200_000 },
      ),
    );
    const live = await mapLimit(Array.from({ length: LIVE_BOOKINGS }), 2, (_, i) => liveStaged(`org-live-ops-${i}`));
    const all = [...sandbox.map((s) => ({ ...s, live: false })), ...live.map((l) => ({ ...l, live: true }))];
    const bookingIds = all.map((b) => b.booking.id);
    await until('every line booked', async () => (await linesIn(bookingIds, ['queued', 'in-progress'])) === 0, 120_000);

    fleet.startChaos(random, 800, 2500, 2500);
    // Live staged lines are enabled (resumed); sandbox campaigns are paused, then half resumed.
    await mapLimit(all, 6, (b) => post(api, b.token, `/api/v1/campaigns/${b.campaignId}/${b.live ? 'resume' : 'pause'}`));
    await settle(bookingIds, 60_000);
    await mapLimit(sandbox.slice(0, Math.ceil(SANDBOX_BOOKINGS / 2)), 6, (b) =>
      post(api, b.token, `/api/v1/campaigns/${b.campaignId}/resume`),
    );
    // Live budgets grow (holding money) while workers die.
    await mapLimit(live, 2, async (b) => {
      const lines = await env
        .db('booking_lines')
        .where({ booking_id: b.booking.id })
        .where('status', 'confirmed')
        .select('id', 'budget_minor');
      const { version } = await env.db('bookings').where({ id: b.booking.id }).first('version');
      if (!lines.length) return;
      await api.fetch(`/api/v1/campaigns/${b.campaignId}/amendments`, {
        method: 'POST',
        token: b.token,
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({
          expectedVersion: version,
          lines: lines.map((l) => ({ lineId: l.id, budgetMinor: Number(l.budget_minor) + 500 })),
        }),
      });
    });
    await settle(bookingIds, 60_000);
    // Then everything is stopped for good.
    await mapLimit(all, 6, (b) => post(api, b.token, `/api/v1/campaigns/${b.campaignId}/stop`));
    // Under fire until the stops are taken up (or 30 kills): a job killed twice before it sent
    // anything fails, and waits for housekeeping's retry below, as it would in production.
    await until(
      'the stops to be taken up under fire',
      async () => fleet.kills >= 30 || (fleet.kills >= 5 && (await linesIn(bookingIds, ['stop-requested'])) === 0),
      90_000,
    ).catch(() => undefined);
    await fleet.calm();
    await settle(bookingIds, 30_000);
    await runHousekeepingNow(env.redis, env.prefix);
    const stranded = await settle(bookingIds, 60_000);

    const lines = await env.db('booking_lines').whereIn('booking_id', bookingIds).select('id', 'booking_id', 'status');
    const operations = await env.db('line_operations').whereIn('booking_id', bookingIds).select('id', 'kind', 'status');
    const attempts = await env
      .db('supplier_attempts')
      .whereIn('booking_id', bookingIds)
      .whereNot('operation', 'book')
      .select('id', 'job_id');
    const receipts = await env
      .db('sandbox_ledger')
      .whereIn(
        'line_id',
        lines.map((l) => l.id),
      )
      .whereNot('operation', 'book')
      .select('idempotency_key');
    // Sent twice: an operation with more than one attempt, or an attempt the supplier received twice.
    const attemptsPerOperation = new Map<string, number>();
    for (const a of attempts) attemptsPerOperation.set(a.job_id, (attemptsPerOperation.get(a.job_id) ?? 0) + 1);
    const receiptsPerAttempt = new Map<string, number>();
    for (const r of receipts) receiptsPerAttempt.set(r.idempotency_key, (receiptsPerAttempt.get(r.idempotency_key) ?? 0) + 1);
    const doubled = [...attemptsPerOperation.values(), ...receiptsPerAttempt.values()].filter((n) => n > 1).length;

    const byBooking = new Map<string, LineStatus[]>();
    for (const l of lines) byBooking.set(l.booking_id, [...(byBooking.get(l.booking_id) ?? []), l.status]);
    const bookings = await env.db('bookings').whereIn('id', bookingIds).select('id', 'status', 'line_counts');
    const inconsistent = bookings.filter(
      (b) => b.status !== bookingStatusOf(byBooking.get(b.id)!) || !sameCounts(b.line_counts, byBooking.get(b.id)!),
    ).length;
    const wallets = await Promise.all(live.map((b) => walletAndLedger(env, b.org)));
    const unbalanced = wallets.filter((w) => !w.consistent || w.wallet.availableMinor < 0).length;
    const count = (s: string) => lines.filter((l) => l.status === s).length;
    const ops = (s: string) => operations.filter((o) => o.status === s).length;

    figure(
      `line operation kills (seed ${SEED}): ${lines.length} lines, ${operations.length} operations, ${fleet.kills} SIGKILLs, ` +
        `${doubled} sent twice, ${stranded} stranded, ${inconsistent} inconsistent bookings, ${unbalanced} unbalanced wallets; ` +
        `operations ${ops('applied')} applied, ${ops('refused')} refused, ${ops('reconciliation-required')} in doubt; ` +
        `lines ${count('stopped')} stopped, ${count('reconciliation-required')} reconciliation-required, ${count('confirmed')} confirmed ` +
        `in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    expect(lines).toHaveLength(SANDBOX_BOOKINGS * 7 + LIVE_BOOKINGS * 7);
    expect(operations.length).toBeGreaterThanOrEqual(lines.length);
    expect(fleet.kills).toBeGreaterThanOrEqual(5);
    expect(doubled).toBe(0);
    expect(stranded).toBe(0);
    expect(inconsistent).toBe(0);
    expect(unbalanced).toBe(0);
  } catch (err) {
    (err as Error).message += `\nworker output:\n${fleet.output().slice(-4000)}`;
    throw err;
  } finally {
    await fleet.close();
  }
}, 600_000);

/** Mostly plain, with the in-flight triggers (slow, refused, answer lost) mixed in. */
function operationTrigger(random: () => number): number {
  const endings = [0, 0, 0, 0, 0, SANDBOX_OPERATION_TRIGGERS.slow, SANDBOX_OPERATION_TRIGGERS.rejected, SANDBOX_OPERATION_TRIGGERS.unknown];
  return endings[Math.floor(random() * endings.length)]!;
}

/** A funded live booking of seven native-staged lines whose creative the supplier approved: staged, enableable. */
async function liveStaged(org: string) {
  await fundWallet(env, org, 1_000_000);
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const creative = await approvedCreative(api, env.db, token, 'native-staged');
  const lines = Array.from({ length: 7 }, (_, k) => ({
    channel: 'ctv',
    adapterKey: 'native-staged',
    budgetMinor: 10_000 + k * 100,
    creativeIds: [creative],
  }));
  const { campaignId, planVersion } = await draftCampaign(api, token, lines, { executionMode: 'live', maximumCommitmentMinor: 80_000 });
  await approve(api, token, campaignId, planVersion);
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  if (res.status !== 202) throw new Error(`live launch failed: ${res.status} ${await res.text()}`);
  const { booking } = (await res.json()) as { booking: { id: string } };
  return { org, token, campaignId, booking };
}

async function linesIn(bookingIds: string[], statuses: LineStatus[]): Promise<number> {
  const [{ n }] = await env.db('booking_lines').whereIn('booking_id', bookingIds).whereIn('status', statuses).count({ n: '*' });
  return Number(n);
}

/** Waits up to `ms` for no line to wait on an operation; returns how many still do. */
async function settle(bookingIds: string[], ms: number): Promise<number> {
  await until('every line to settle', async () => (await linesIn(bookingIds, WAITING)) === 0, ms).catch(() => undefined);
  return linesIn(bookingIds, WAITING);
}
