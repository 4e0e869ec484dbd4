import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, readBooking, waitForBooking } from '../support/bookings';
import { pollOptions, pollSupplier } from '../support/delivery-poll';
import { ADAPTER_IMPLEMENTATIONS } from '../../workers/adapters/registry';
import { pollDelivery, type PollOptions } from '../../workers/delivery-poller';
import { Queue } from 'bullmq';
import { addDays } from '../../shared/dates';
import { POLL_DELIVERY } from '../../shared/queues/jobs';
import { queuePrefix } from '../../shared/queues/names';
import { advanceSandboxClock } from '../../shared/workspaces/sandbox-clock';
import type { CampaignDelivery } from '../../shared/delivery/campaign-delivery';
import { findAction } from '../../shared/agent/actions';
import { recordDelivery } from '../../shared/delivery/delivery-store';
import { notePacingChanges } from '../../shared/delivery/pacing-events';
import { day } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const poll = (adapterKey: string, over: Partial<PollOptions> = {}) => pollSupplier(env.db, adapterKey, { batchSize: 2, ...over });

const today = new Date().toISOString().slice(0, 10);
const advance = (token: string, days: number) => post(api, token, '/api/v1/sandbox/clock/advance', { days });
const delivery = async (token: string, campaignId: string, query = '') => {
  const res = await api.fetch(`/api/v1/campaigns/${campaignId}/delivery${query}`, { token });
  expect(res.status).toBe(200);
  return (await json<{ delivery: CampaignDelivery }>(res)).delivery;
};

/** The workspace's stored webhook events of one type, in the order written. */
const storedEvents = async (org: string, type: string) =>
  (await env.db('webhook_events').where({ workspace_id: org, type }).orderBy('seq')) as Array<{
    subject_type: string;
    subject_id: string;
    subject_version: number;
    body: Record<string, unknown>;
  }>;

/** A sandbox campaign of two weeks from today: a line on pace, one under, one over, one restating. */
async function twoWeeks(org: string) {
  const lines = [
    { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 140_000 },
    { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 140_071 },
    { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 140_072 },
    { channel: 'search', adapterKey: 'sandbox-search', budgetMinor: 140_074 },
  ];
  const launched = await launchPlan(env, api, lines, org, { startDate: today, endDate: addDays(today, 13) });
  await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
  return { ...launched, keys: lines.map((l) => l.adapterKey) };
}

describe('delivery of a sandbox campaign on the workspace test clock', () => {
  test('a line whose pacing moves tells subscribers once (delivery.pacing_changed); a line on pace, or a poll that moves nothing, tells no one', async () => {
    const org = 'org-d9';
    const owner = await env.issuer.token({ org, user: `${org}-owner` });
    const subscribed = await post(api, owner, '/api/v1/webhooks/subscriptions', {
      url: 'http://127.0.0.1:9/pacing',
      eventTypes: ['delivery.pacing_changed', 'delivery.outlook_changed'],
    });
    expect(subscribed.status).toBe(201);
    const { token, keys, booking } = await twoWeeks(org);
    const lineIdOf = (key: string) => booking.lines.find((l) => l.adapterKey === key)!.id;
    const events = () => storedEvents(org, 'delivery.pacing_changed');
    expect(await events()).toEqual([]);

    expect((await advance(token, 7)).status).toBe(200);
    for (const key of keys) await poll(key, { advertiserId: org });
    const moved = await events();
    expect(moved.map((e) => [e.subject_type, e.subject_id, e.subject_version, e.body.status]).sort()).toEqual(
      [
        ['line_pacing', lineIdOf('sandbox-audio'), 1, 'under'],
        ['line_pacing', lineIdOf('sandbox-dooh'), 1, 'over'],
      ].sort(),
    );
    for (const e of moved) expect(e.body).toMatchObject({ campaignId: booking.campaignId, bookingId: booking.id, lineId: e.subject_id });
    // The line on pace is recorded as on track, without an event.
    expect(
      await env
        .db('booking_lines')
        .where({ id: lineIdOf('sandbox-ctv') })
        .first('pacing_status', 'pacing_version'),
    ).toEqual({
      pacing_status: 'on-track',
      pacing_version: 1,
    });

    // The outlook moved the same way, told as its own event: the slow line under-delivers, the fast one
    // exhausts its budget early, on the day the delivery answer shows.
    const outlooks = await storedEvents(org, 'delivery.outlook_changed');
    expect(outlooks.map((e) => [e.subject_type, e.subject_id, e.subject_version, e.body.classification, e.body.previous]).sort()).toEqual(
      [
        ['line_outlook', lineIdOf('sandbox-audio'), 1, 'under-delivery', null],
        ['line_outlook', lineIdOf('sandbox-dooh'), 1, 'early-exhaustion', null],
      ].sort(),
    );
    const shown = (await delivery(token, booking.campaignId)).lines.find((l) => l.lineId === lineIdOf('sandbox-dooh'))!;
    expect(outlooks.find((e) => e.subject_id === shown.lineId)!.body).toMatchObject({
      campaignId: booking.campaignId,
      exhaustionDate: shown.outlook.exhaustionDate,
      projectedSpendMinor: shown.outlook.spend.projectedMinor,
      budgetMinor: shown.budgetMinor,
    });
    expect(
      await env
        .db('booking_lines')
        .where({ id: lineIdOf('sandbox-ctv') })
        .first('outlook_class', 'outlook_version'),
    ).toEqual({ outlook_class: 'on-track', outlook_version: 1 });

    // Asked again with nothing new, no line moves: no event.
    for (const key of keys) await poll(key, { advertiserId: org });
    expect(await events()).toHaveLength(2);
    expect(await storedEvents(org, 'delivery.outlook_changed')).toHaveLength(2);

    // A restated day that moves the slow line's outlook again tells subscribers again, naming where it was.
    const slow = lineIdOf('sandbox-audio');
    await env.db.transaction(async (trx) => {
      await recordDelivery(
        trx,
        [
          {
            line: { lineId: slow, bookingId: booking.id, advertiserId: org },
            report: { asOf: new Date().toISOString(), days: [day(addDays(today, 6), 200_000)] },
          },
        ],
        { kind: 'supplier' },
      );
      await notePacingChanges(trx, [slow], 0.15);
    });
    const again = (await storedEvents(org, 'delivery.outlook_changed')).filter((e) => e.subject_id === slow);
    expect(again.map((e) => [e.subject_version, e.body.classification, e.body.previous])).toEqual([
      [1, 'under-delivery', null],
      [2, 'early-exhaustion', 'under-delivery'],
    ]);
  });

  test('a line whose delivered spend goes past its budget tells subscribers once (delivery.over_budget); lines within budget tell no one', async () => {
    const org = 'org-d10';
    const owner = await env.issuer.token({ org, user: `${org}-owner` });
    expect(
      (await post(api, owner, '/api/v1/webhooks/subscriptions', { url: 'http://127.0.0.1:9/budget', eventTypes: ['delivery.over_budget'] }))
        .status,
    ).toBe(201);
    const { token, keys, booking, campaignId } = await twoWeeks(org);
    const over = booking.lines.find((l) => l.adapterKey === 'sandbox-dooh')!;
    const events = () => storedEvents(org, 'delivery.over_budget');

    // Eleven days at 125% of pace is still within the budget: nothing to tell. (A poll reads back
    // DELIVERY_RESTATEMENT_DAYS, so the clock moves in two steps.)
    for (const days of [6, 5]) {
      expect((await advance(token, days)).status).toBe(200);
      for (const key of keys) await poll(key, { advertiserId: org });
    }
    expect(await events()).toEqual([]);

    // The twelfth day takes it past: one event, with the figures the delivery answer shows.
    expect((await advance(token, 1)).status).toBe(200);
    for (const key of keys) await poll(key, { advertiserId: org });
    const told = await events();
    const shown = (await delivery(token, campaignId)).lines.find((l) => l.lineId === over.id)!;
    expect(shown.overDeliveredMinor).toBeGreaterThan(0);
    expect(told.map((e) => [e.subject_type, e.subject_id, e.subject_version])).toEqual([['line_budget', over.id, 1]]);
    expect(told[0]!.body).toEqual({
      campaignId,
      bookingId: booking.id,
      lineId: over.id,
      budgetMinor: shown.budgetMinor,
      deliveredSpendMinor: shown.deliveredSpendMinor,
      overDeliveredMinor: shown.overDeliveredMinor,
    });

    // Further over, and asked again: still told once.
    expect((await advance(token, 1)).status).toBe(200);
    for (const key of keys) await poll(key, { advertiserId: org });
    expect(await events()).toHaveLength(1);
  });

  test('moving the clock delivers the days passed; pacing says who is on pace, under and over; the CSV has a row per line and day', async () => {
    const { campaignId, token, keys, booking } = await twoWeeks('org-d1');
    // Nothing is over yet on day one.
    expect((await delivery(token, campaignId)).totals.spendMinor).toBe(0);

    const moved = await advance(token, 7);
    expect(moved.status).toBe(200);
    expect((await json<{ clock: { offsetDays: number; today: string } }>(moved)).clock).toMatchObject({
      offsetDays: 7,
      today: addDays(today, 7),
    });
    // The move asks each supplier at once; the workers deliver the seven days passed.
    const deadline = Date.now() + 20_000;
    let d = await delivery(token, campaignId);
    while (d.lines.some((l) => l.days.length < 7) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      d = await delivery(token, campaignId);
    }
    for (const key of keys) await poll(key);
    d = await delivery(token, campaignId);

    expect(d.today).toBe(addDays(today, 7));
    expect(d.lines.map((l) => l.days.length)).toEqual([7, 7, 7, 7]);
    const [onPace, under, over, restating] = d.lines;
    expect(onPace!.pacing.status).toBe('on-track');
    expect(under!.pacing.status).toBe('under');
    expect(over!.pacing.status).toBe('over');
    expect(restating!.pacing.status).toBe('on-track');
    expect(onPace!.pacing.expectedSpendMinor).toBe(70_000);
    expect(onPace!.asOf).not.toBeNull();
    expect(onPace!.stale).toBe(false);
    for (const l of d.lines) expect(l.spendMinor).toBe(l.days.reduce((s, x) => s + x.spendMinor, 0));
    expect(d.totals.spendMinor).toBe(d.lines.reduce((s, l) => s + l.spendMinor, 0));
    expect(d.totals.budgetMinor).toBe(560_217);

    // The outlook: where each line ends its flight, from the seven days in, with an interval.
    expect(onPace!.outlook).toMatchObject({
      basis: 'recent-rate',
      daysObserved: 7,
      daysRemaining: 7,
      classification: 'on-track',
      level: 0.8,
    });
    expect(under!.outlook).toMatchObject({ classification: 'under-delivery', exhaustionDate: null });
    expect(over!.outlook.classification).toBe('early-exhaustion');
    expect(over!.outlook.exhaustionDate! > addDays(today, 6) && over!.outlook.exhaustionDate! < addDays(today, 13)).toBe(true);
    expect(d.outlook).toMatchObject({ classification: 'early-exhaustion', exhaustionDate: over!.outlook.exhaustionDate });
    expect(d.outlook.spend.projectedMinor).toBe(d.lines.reduce((s, l) => s + l.outlook.spend.projectedMinor, 0));
    // The straight-line projection stays beside it.
    expect(onPace!.pacing.projectedSpendMinor).toBe(Math.round((onPace!.deliveredSpendMinor * 14) / 7));
    const intervals = new Map(d.lines.map((l) => [l.lineId, l.outlook.spend]));

    const csv = await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token, headers: { accept: 'text/csv' } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = (await csv.text()).trim().split('\r\n');
    expect(rows[0]).toBe(
      'line_id,booking_id,channel,adapter_key,date,impressions,clicks,completions,spend_minor,outlook,projected_spend_minor,projected_low_minor,projected_high_minor,exhaustion_date',
    );
    expect(rows).toHaveLength(1 + 28);
    expect(rows.filter((r) => r.startsWith(onPace!.lineId)).map((r) => Number(r.split(',')[8]))).toEqual(
      onPace!.days.map((x) => x.spendMinor),
    );
    // Each row carries its line's outlook.
    const overRow = rows.find((r) => r.startsWith(over!.lineId))!.split(',');
    expect(overRow.slice(9)).toEqual([
      'early-exhaustion',
      String(over!.outlook.spend.projectedMinor),
      String(over!.outlook.spend.lowMinor),
      String(over!.outlook.spend.highMinor),
      over!.outlook.exhaustionDate,
    ]);

    // Sandbox delivery moves no money: the overview shows it apart, with the lines off pace on the workspace's clock.
    const overview = await api.fetch(`/api/v1/workspace/overview?from=${today}&to=${addDays(today, 30)}`, { token });
    const o = (
      await json<{
        overview: {
          spend: { sandbox: { managementFeesMinor: number } };
          linesOffPace: { lines: Array<{ lineId: string }> };
          wallet: unknown;
        };
      }>(overview)
    ).overview;
    const capped = d.lines.reduce((s, l) => s + Math.min(l.deliveredSpendMinor, l.budgetMinor), 0);
    expect(o.spend).toMatchObject({ mediaSpendMinor: 0, deliveredSpendMinor: 0, sandbox: { deliveredSpendMinor: capped } });
    expect(o.spend.sandbox.managementFeesMinor).toBe(Math.floor((capped * 10 + 50) / 100));
    expect(o.linesOffPace.lines.map((l) => l.lineId).sort()).toEqual([under!.lineId, over!.lineId].sort());
    expect(o.wallet).toMatchObject({ balanceMinor: 0, reservedMinor: 0 });

    // Pacing feeds optimizations: the slow line's projected shortfall moves to the lines not under
    // pace, the fast one proposes a pause; both are governed actions a person approves, not accepted here.
    const listed = await api.fetch(`/api/v1/campaigns/${campaignId}/optimizations`, { token });
    const { optimizations } = await json<{
      optimizations: Array<{ id: string; kind: string; change: { type: string; action: string; parameters: Record<string, unknown> } }>;
    }>(listed);
    const move = optimizations.find((o) => o.kind === 'move-budget-from-slow-line')!;
    const pause = optimizations.find((o) => o.kind === 'pause-fast-line')!;
    expect(move.change).toMatchObject({ type: 'governed-action', action: 'campaign.amend' });
    expect(pause.change).toMatchObject({ type: 'governed-action', action: 'campaign.pause', parameters: { campaignId } });
    const budgets = move.change.parameters.lines as Array<{ lineId: string; budgetMinor: number }>;
    expect(budgets[0]!.lineId).toBe(under!.lineId);
    expect(budgets[0]!.budgetMinor).toBeLessThan(under!.budgetMinor);
    // Moved, not added: the lines named keep their total.
    expect(budgets.reduce((s, l) => s + l.budgetMinor, 0)).toBe(
      d.lines.filter((l) => budgets.some((m) => m.lineId === l.lineId)).reduce((s, l) => s + l.budgetMinor, 0),
    );
    const accepted = await post(api, token, `/api/v1/optimizations/${move.id}/accept`);
    expect(accepted.status).toBe(409);
    expect((await json<{ code: string }>(accepted)).code).toBe('governed_action_required');
    // The proposals are valid parameters of the governed actions they name.
    for (const proposal of [move, pause]) {
      expect(findAction(proposal.change.action)?.parameters.safeParse(proposal.change.parameters).success).toBe(true);
    }

    // The restating line's last days were provisional; two days on, they are restated, and both figures are kept.
    const provisional = restating!.days.at(-1)!;
    await advance(token, 3);
    for (const key of keys) await poll(key);
    const later = (await delivery(token, campaignId)).lines[3]!;
    const restated = later.days.find((x) => x.date === provisional.date)!;
    expect(restated.spendMinor).toBeGreaterThan(provisional.spendMinor);
    const revisions = await env
      .db('delivery_revisions')
      .where({ line_id: restating!.lineId, day: provisional.date })
      .orderBy('revision')
      .select('revision', 'spend_minor');
    expect(revisions.map((r) => [r.revision, Number(r.spend_minor)])).toEqual([
      [1, provisional.spendMinor],
      [2, restated.spendMinor],
    ]);
    // Polling again stores nothing new.
    const count = async () => Number((await env.db('delivery_revisions').count({ n: '*' }))[0]!.n);
    const before = await count();
    for (const key of keys) await poll(key);
    expect(await count()).toBe(before);

    // The flight ends on the clock; the booking says so, then closes out once the restatement window has passed.
    await advance(token, 5);
    const ended = await readBooking(api, token, booking.id);
    expect(ended).toMatchObject({ flightEnded: true, closeoutPending: true });
    // Each line's final spend, a week after the outlook was read, is where the outlook put it or near (an
    // 80% interval of four lines; the restating line's provisional days read low).
    for (const key of keys) await poll(key);
    const finals = (await delivery(token, campaignId)).lines;
    for (const l of finals)
      expect(l.outlook).toMatchObject({ basis: 'final', daysRemaining: 0, spend: { projectedMinor: l.deliveredSpendMinor } });
    const inside = finals.filter((l) => {
      const i = intervals.get(l.lineId)!;
      return l.deliveredSpendMinor >= i.lowMinor! && l.deliveredSpendMinor <= i.highMinor!;
    });
    expect(inside.length).toBeGreaterThanOrEqual(3);
    // Ended, its lines are no longer running: however they paced, none is off pace now.
    const afterFlight = await api.fetch('/api/v1/workspace/overview', { token });
    expect((await json<{ overview: { linesOffPace: { total: number } } }>(afterFlight)).overview.linesOffPace.total).toBe(0);
    await advance(token, 8);
    for (const key of keys) await poll(key);
    const closed = await readBooking(api, token, booking.id);
    expect(closed).toMatchObject({ flightEnded: true, closeoutPending: false });
    const final = await delivery(token, campaignId);
    expect(final.lines[0]!.deliveredSpendMinor).toBe(140_000);
    expect(final.lines[2]!.overDeliveredMinor).toBe(Math.round(140_072 * 1.25) - 140_072);
  });

  test('a supplier outage keeps the last figures, shows their age and the failure, and invents nothing', async () => {
    const { campaignId, token } = await twoWeeks('org-d2');
    await advance(token, 3);
    await poll('sandbox-ctv', { advertiserId: 'org-d2' });
    const before = (await delivery(token, campaignId)).lines[0]!;
    expect(before.days).toHaveLength(3);

    // Moved directly, not through the API, so the workers' own poll (which the API asks for) does not run.
    await advanceSandboxClock(env.db, 'org-d2', 2, 'test');
    const down = {
      ...ADAPTER_IMPLEMENTATIONS.get('sandbox-ctv')!,
      reporter: { delivery: () => Promise.reject(new Error('503 from the supplier')) },
    };
    const result = await pollDelivery(env.db, down, pollOptions({ batchSize: 2, advertiserId: 'org-d2' }));
    expect(result).toMatchObject({ failed: 1, fetched: 0 });
    const after = (await delivery(token, campaignId)).lines[0]!;
    // The figures are as they were (a day may have become final meanwhile: its window passed).
    const figures = (days: typeof before.days) => days.map(({ final: _final, ...figures }) => figures);
    expect(figures(after.days)).toEqual(figures(before.days));
    expect(after.fetchedAt).toBe(before.fetchedAt);
    expect(after.stale).toBe(true);
    expect(after.lastError).toMatch(/503 from the supplier/);
    expect(after.ageSeconds).toBeGreaterThanOrEqual(0);
    // The supplier is back: the missing days arrive and the line is fresh again.
    await poll('sandbox-ctv', { advertiserId: 'org-d2' });
    const back = (await delivery(token, campaignId)).lines[0]!;
    expect(back.days).toHaveLength(5);
    expect(back.stale).toBe(false);
  });
});

describe('the delivery poller', () => {
  test('asks a supplier reached over the network at most callsPerSecond times a second', async () => {
    const org = 'org-d7';
    const lines = [0, 1, 2].map((k) => ({ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 30_000 + k * 100 }));
    const launched = await launchPlan(env, api, lines, org, { startDate: today, endDate: addDays(today, 13) });
    await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    await advanceSandboxClock(env.db, org, 2, 'test');
    // The sandbox supplier, as a seller reached over the network would be, its calls timed.
    const sandbox = ADAPTER_IMPLEMENTATIONS.get('sandbox-ctv')!;
    const calls: number[] = [];
    const networked = {
      ...sandbox,
      descriptor: { ...sandbox.descriptor, kind: 'adcp' as const },
      reporter: {
        delivery: (...args: Parameters<NonNullable<typeof sandbox.reporter>['delivery']>) => {
          calls.push(performance.now());
          return sandbox.reporter!.delivery(...args);
        },
      },
    };
    const started = performance.now();
    const result = await pollDelivery(env.db, networked, pollOptions({ batchSize: 2, advertiserId: org, callsPerSecond: 2 }));
    expect(result).toMatchObject({ fetched: 3, failed: 0 });
    // Two a second: each call waits its half second after the one before.
    expect(calls).toHaveLength(3);
    calls.forEach((t, i) => expect(t - (i === 0 ? started : calls[i - 1]!)).toBeGreaterThanOrEqual(490));
  });

  test('is a job scheduler on each supplier queue that reports delivery, and on no workflow queue', async () => {
    const schedulers = async (name: string) => {
      const q = new Queue(name, { connection: env.redis, prefix: queuePrefix(env.prefix, name) });
      try {
        return (await q.getJobSchedulers()).map((s) => s.key);
      } finally {
        await q.close();
      }
    };
    expect(await schedulers('supplier.sandbox-ctv')).toContain(POLL_DELIVERY);
    expect(await schedulers('supplier.native-staged')).toContain(POLL_DELIVERY);
    expect(await schedulers('supplier.manual')).not.toContain(POLL_DELIVERY);
  });
});

describe('the sandbox clock', () => {
  test('reads zero days ahead at first; bad moves are refused with 400 and change nothing', async () => {
    const token = await env.issuer.token({ org: 'org-d3', user: 'alice' });
    const read = async () => (await json<{ clock: { offsetDays: number } }>(await api.fetch('/api/v1/sandbox/clock', { token }))).clock;
    expect((await read()).offsetDays).toBe(0);
    for (const body of [{ days: 0 }, { days: 121 }, { days: 1.5 }, { days: 1, extra: true }, {}]) {
      expect((await post(api, token, '/api/v1/sandbox/clock/advance', body)).status).toBe(400);
    }
    expect((await read()).offsetDays).toBe(0);
    expect((await advance(token, 120)).status).toBe(200);
    expect((await read()).offsetDays).toBe(120);
  });

  test('a delegated agent may not move it', async () => {
    const agent = await env.issuer.token({ org: 'org-d3', user: 'alice', agent: 'assistant-1' });
    const res = await advance(agent, 1);
    expect(res.status).toBe(403);
  });

  test('it is refused outside sandbox billing', async () => {
    const live = await env.api({ BILLING_MODE: 'live', STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' });
    const token = await env.issuer.token({ org: 'org-d4', user: 'bob' });
    expect((await live.fetch('/api/v1/sandbox/clock', { token })).status).toBe(403);
    const moved = await post(live, token, '/api/v1/sandbox/clock/advance', { days: 3 });
    expect(moved.status).toBe(403);
    expect(await env.db('sandbox_clocks').where({ advertiser_id: 'org-d4' }).first()).toBeUndefined();
  });

  test('delivery of an unknown or another workspace’s campaign is 404; bad ranges are 400', async () => {
    const token = await env.issuer.token({ org: 'org-d5', user: 'eve' });
    const other = await env.issuer.token({ org: 'org-d6', user: 'mallory' });
    const { campaignId } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], 'org-d5');
    expect((await api.fetch(`/api/v1/campaigns/${campaignId}/delivery`, { token: other })).status).toBe(404);
    expect((await api.fetch(`/api/v1/campaigns/${campaignId}/delivery?from=2099-02-30`, { token })).status).toBe(400);
    expect((await api.fetch(`/api/v1/campaigns/${campaignId}/delivery?from=2099-03-02&to=2099-03-01`, { token })).status).toBe(400);
    expect((await api.fetch(`/api/v1/campaigns/${campaignId}/delivery?from=2000-01-01&to=2099-03-01`, { token })).status).toBe(400);
    expect((await api.fetch(`/api/v1/campaigns/${campaignId}/delivery?colour=red`, { token })).status).toBe(400);
  });
});
