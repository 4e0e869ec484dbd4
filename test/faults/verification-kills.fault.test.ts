import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post } from '../support/bookings';
import { seeded } from '../support/random';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { killableFleet, mapLimit } from './support/fleet';
import { figure } from './support/input-report';

/**
 * Verified control under fire (docs/bookings.md, "Verified control"): 48 sandbox lines in six
 * workspaces are stopped, then their workspaces' clocks advance day by day, each advance queuing
 * the delivery polls that verify the stops, while two worker processes are SIGKILLed at random
 * and replaced. A quarter of the lines' supplier ignores the stop (the sandbox's …78 trigger). Once
 * the fleet is calm, one more advance is the sweep. No change may be decided twice, none may be
 * left pending, every ignored stop must be caught (and told once), every honoured one verified.
 */
const WORKSPACES = 6;
const LINES = 8;
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const today = () => new Date().toISOString().slice(0, 10);
const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

test('workers killed while delivery polls verify stops decide each change once, leave none pending, and catch every ignored stop', async () => {
  const random = seeded(SEED);
  const fleet = killableFleet(env);
  const started = Date.now();
  fleet.start();
  try {
    const launched = await mapLimit(Array.from({ length: WORKSPACES }), 3, (_, w) =>
      launchPlan(
        env,
        api,
        Array.from({ length: LINES }, (_, k) => ({
          channel: 'ctv' as const,
          adapterKey: 'sandbox-ctv',
          // Two lines in each workspace ignore pause and stop (…78).
          budgetMinor: 20_000 + k * 100 + (k < 2 ? 78 : 0),
        })),
        `org-vk-${w}`,
        { executionMode: 'sandbox', startDate: today(), endDate: inDays(29), maximumCommitmentMinor: 200_000 },
      ),
    );
    const bookingIds = launched.map((l) => l.booking.id);
    const linesIn = async (statuses: string[]) =>
      Number((await env.db('booking_lines').whereIn('booking_id', bookingIds).whereIn('status', statuses).count({ n: '*' }))[0]!.n);
    await until('every line booked', async () => (await linesIn(['confirmed'])) === WORKSPACES * LINES, 120_000);
    const advance = (l: (typeof launched)[number], days: number) => post(api, l.token, '/api/v1/sandbox/clock/advance', { days });
    await mapLimit(launched, 3, (l) => advance(l, 1));
    await mapLimit(launched, 3, (l) => post(api, l.token, `/api/v1/campaigns/${l.campaignId}/stop`, { note: 'Brand safety.' }));
    await until('every line stopped', async () => (await linesIn(['stopped'])) === WORKSPACES * LINES, 120_000);

    // Day by day, under fire: each advance queues the polls that look at the stops.
    fleet.startChaos(random, 400, 1500, 1500);
    for (let day = 0; day < 4; day++) {
      await mapLimit(launched, 3, (l) => advance(l, 1));
      await new Promise((r) => setTimeout(r, 1_500));
    }
    await fleet.calm();
    // The sweep: the next poll of each workspace, on a calm fleet, as the schedule would bring it.
    await mapLimit(launched, 3, (l) => advance(l, 1));
    const pending = () => env.db('line_operations').whereIn('booking_id', bookingIds).where({ kind: 'stop', verification: 'pending' });
    await until('no stop left pending', async () => (await pending()).length === 0, 120_000).catch(() => undefined);

    const ops = await env
      .db('line_operations as o')
      .join('booking_lines as l', 'l.id', 'o.line_id')
      .whereIn('o.booking_id', bookingIds)
      .where('o.kind', 'stop')
      .select('o.id', 'o.line_id', 'o.verification', 'o.verification_version', 'l.budget_minor', 'l.status');
    const ignoring = (o: { budget_minor: string }) => Number(o.budget_minor) % 100 === 78;
    const told = await env
      .db('booking_events')
      .whereIn('booking_id', bookingIds)
      .where({ action: 'line.control_failed' })
      .select('line_id');
    const toldPerLine = new Map<string, number>();
    for (const t of told) toldPerLine.set(t.line_id, (toldPerLine.get(t.line_id) ?? 0) + 1);
    const decidedTwice = ops.filter((o) => o.verification_version !== 2).length;
    const leftPending = ops.filter((o) => o.verification === 'pending').length;
    const missed = ops.filter((o) => ignoring(o) && o.verification !== 'failed').length;
    const wronglyFailed = ops.filter((o) => !ignoring(o) && o.verification !== 'verified').length;
    const toldTwice = [...toldPerLine.values()].filter((n) => n > 1).length;
    const wallets = await Promise.all(launched.map((_, w) => walletAndLedger(env, `org-vk-${w}`)));
    const unbalanced = wallets.filter((w) => !w.consistent).length;

    figure(
      `verification kills (seed ${SEED}): ${ops.length} stops, ${fleet.kills} SIGKILLs, ${decidedTwice} decided twice, ` +
        `${leftPending} left pending, ${missed} ignored stops missed, ${wronglyFailed} honoured stops not verified, ` +
        `${toldTwice} told twice, ${unbalanced} unbalanced wallets in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    expect(ops).toHaveLength(WORKSPACES * LINES);
    expect(fleet.kills).toBeGreaterThanOrEqual(3);
    expect(leftPending).toBe(0);
    expect(decidedTwice).toBe(0);
    expect(missed).toBe(0);
    expect(wronglyFailed).toBe(0);
    expect(toldTwice).toBe(0);
    expect(told).toHaveLength(WORKSPACES * 2);
    expect(ops.filter(ignoring).every((o) => o.status === 'reconciliation-required')).toBe(true);
    expect(unbalanced).toBe(0);
  } catch (err) {
    (err as Error).message += `\nworker output:\n${fleet.output().slice(-4000)}`;
    throw err;
  } finally {
    await fleet.close();
  }
}, 600_000);
