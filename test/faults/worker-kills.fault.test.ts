import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, SEVEN_CHANNELS, type PlanLineInput } from '../support/bookings';
import { until } from '../support/wait';
import { bookingStatusOf, sameCounts } from '../support/bookings';
import type { LineStatus } from '../../shared/bookings/lines/state';
import { SANDBOX_TRIGGERS } from '../../workers/adapters/sandbox';
import { seeded } from '../support/random';
import { killableFleet, mapLimit, runHousekeepingNow } from './support/fleet';
import { figure } from './support/input-report';

/**
 * 1,001 line operations (143 seven-channel bookings) run by two worker processes that are
 * SIGKILLed at random moments and replaced. Nothing may be sent twice, nothing may be lost,
 * and every booking's status must follow from its lines.
 */
const BOOKINGS = 143;
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

/** Mostly plain confirmations, with each sandbox trigger (slow, rejected, answer lost) mixed in. */
function linesFor(random: () => number): PlanLineInput[] {
  const endings = [0, 0, 0, 0, SANDBOX_TRIGGERS.slow, SANDBOX_TRIGGERS.slow, SANDBOX_TRIGGERS.rejected, SANDBOX_TRIGGERS.unknown];
  return SEVEN_CHANNELS.map((channel, i) => ({
    channel,
    adapterKey: `sandbox-${channel}`,
    budgetMinor: 10_000 + i * 100 + endings[Math.floor(random() * endings.length)]!,
  }));
}

test('workers killed at random lose no line, send nothing twice and leave every booking consistent', async () => {
  const random = seeded(SEED);
  const fleet = killableFleet(env);
  const started = Date.now();
  fleet.start();
  fleet.startChaos(random, 1000, 3000, 3000);
  try {
    const plans = Array.from({ length: BOOKINGS }, () => linesFor(random));
    const launched = await mapLimit(plans, 6, (lines, i) => launchPlan(env, api, lines, `org-kill-${i % 8}`));
    const launchedIds = launched.map((l) => l.booking.id);
    // Keep killing workers until every line has been taken up and at least five were killed
    // (a fast machine takes every line up within a few kills), or 30 kills.
    await until(
      'every line to be taken up under fire',
      async () => fleet.kills >= 30 || (fleet.kills >= 5 && (await openLines(['queued'])) === 0),
      180_000,
    );
    await fleet.calm();
    const openBeforeHousekeeping = await settle(30_000);
    // Whatever a double crash left open is the scheduled housekeeping's to close.
    if (openBeforeHousekeeping > 0) await runHousekeepingNow(env.redis, env.prefix);
    await settle(60_000);

    const lines = await env.db('booking_lines').whereIn('booking_id', launchedIds).select('id', 'booking_id', 'status', 'budget_minor');
    const ledger = await env.db('sandbox_ledger').where({ operation: 'book' }).select('line_id', 'outcome');
    const sent = new Map<string, string[]>();
    for (const r of ledger) sent.set(r.line_id, [...(sent.get(r.line_id) ?? []), r.outcome]);

    const doubled = [...sent.values()].filter((o) => o.length > 1).length;
    const lost = lines.filter((l) => l.status === 'queued' || l.status === 'in-progress').length;
    // A definite line says what its supplier actually did.
    const wrong = lines.filter((l) => {
      const outcomes = sent.get(l.id) ?? [];
      if (l.status === 'confirmed') return !(outcomes.length === 1 && ['confirmed', 'slow'].includes(outcomes[0]!));
      if (l.status === 'rejected') return !(outcomes.length === 1 && outcomes[0] === 'rejected');
      return l.status !== 'reconciliation-required';
    });
    const bookings = await env.db('bookings').whereIn('id', launchedIds).select('id', 'status', 'line_counts');
    const byBooking = new Map<string, LineStatus[]>();
    for (const l of lines) byBooking.set(l.booking_id, [...(byBooking.get(l.booking_id) ?? []), l.status]);
    // The status, and the line counts it is computed from, agree with the lines themselves.
    const inconsistent = bookings.filter(
      (b) => b.status !== bookingStatusOf(byBooking.get(b.id)!) || !sameCounts(b.line_counts, byBooking.get(b.id)!),
    ).length;
    const count = (s: string) => lines.filter((l) => l.status === s).length;
    // Lines whose supplier answered but whose worker died before recording it.
    const interrupted = lines.filter((l) => l.status === 'reconciliation-required' && sent.get(l.id)?.[0] !== 'unknown').length;

    figure(
      `worker kills (seed ${SEED}): ${lines.length} line operations, ${fleet.kills} SIGKILLs, ` +
        `${doubled} sent twice, ${lost} lost, ${wrong.length} wrong, ${inconsistent} inconsistent bookings; ` +
        `${count('confirmed')} confirmed, ${count('rejected')} rejected, ${count('reconciliation-required')} reconciliation-required ` +
        `(${interrupted} interrupted by a kill, ${openBeforeHousekeeping} closed by housekeeping) in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    expect(lines).toHaveLength(BOOKINGS * 7);
    expect(fleet.kills).toBeGreaterThanOrEqual(5);
    expect(doubled).toBe(0);
    expect(lost).toBe(0);
    expect(wrong.map((l) => [l.status, sent.get(l.id)])).toEqual([]);
    expect(inconsistent).toBe(0);
  } catch (err) {
    (err as Error).message += `\nworker output:\n${fleet.output().slice(-4000)}`;
    throw err;
  } finally {
    await fleet.close();
  }

  async function openLines(statuses = ['queued', 'in-progress']): Promise<number> {
    const [{ n }] = await env.db('booking_lines').whereIn('status', statuses).count({ n: '*' });
    return Number(n);
  }

  /** Waits up to `ms` for every line to leave queued/in-progress; returns how many did not. */
  async function settle(ms: number): Promise<number> {
    await until('every line to settle', async () => (await openLines()) === 0, ms).catch(() => undefined);
    return openLines();
  }
}, 420_000);
