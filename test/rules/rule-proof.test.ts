import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { addDays } from '../../shared/dates';
import { subscribe } from '../support/webhooks';
import { until } from '../support/wait';
import {
  approver,
  createRule,
  enable,
  moveRule,
  nextDay as nextRuleDay,
  ruleCycle,
  ruleFirings,
  send,
  settled as settledLines,
  today,
  twoLineCampaign,
} from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const cycle = (org: string) => ruleCycle(env, org);
const budgets = async (ids: string[]) =>
  (await env.db('booking_lines').whereIn('id', ids).orderBy('position').select('budget_minor')).map((l) => Number(l.budget_minor));
const firings = (ruleId: string) => ruleFirings(env, ruleId);
const nextDay = (org: string, token: string, lineIds: string[]) => nextRuleDay(env, api, org, token, lineIds);
const settled = (lineIds: string[]) => settledLines(env, lineIds);

describe('a month-long flight on the sandbox clock', () => {
  test('a rule moves budget from the under-delivering line to the on-track one: each move one amendment, one operation per line at the supplier, one approval under the mandate and one receipt; its guardrails bound the money; every firing is told', async () => {
    const org = 'org-rule-month';
    const { token, campaignId, onTrack, under } = await twoLineCampaign(env, api, org, 30);
    await subscribe(env, api, org, ['rule.fired']);
    const lead = await approver(env, org);
    const rule = await enable(api, lead, await createRule(api, lead, moveRule(campaignId)), 20_000);
    const ids = [onTrack.id, under.id];

    for (let d = 1; d <= 31; d++) {
      await nextDay(org, token, ids);
      // The cycle the poll queued may have run already; another one changes nothing.
      await cycle(org);
      await settled(ids);
    }
    const all = await firings(rule.id);
    const executed = all.filter((f) => f.outcome === 'executed');
    // 30,000 over the flight at 10,000 a move: three moves, each after the condition held two days, two days apart at least.
    expect(executed.map((f) => [f.subject_id, f.planned.toLineId, Number(f.moved_minor)])).toEqual([
      [under.id, onTrack.id, 10_000],
      [under.id, onTrack.id, 10_000],
      [under.id, onTrack.id, 10_000],
    ]);
    const days = executed.map((f) => String(f.evaluation_day));
    for (let i = 1; i < days.length; i++) expect(Date.parse(days[i]!) - Date.parse(days[i - 1]!)).toBeGreaterThan(2 * 86_400_000);
    // After the flight's most was moved, the condition still held: held by the guardrail, nothing more moved.
    const after = all.filter((f) => String(f.evaluation_day) > days[2]!);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((f) => f.outcome === 'held' && Number(f.moved_minor) === 0)).toBe(true);
    expect(after[0]!.detail).toMatch(/flight's most budget moved/);
    // The on-track line never fired; the budgets moved exactly, the campaign's total unchanged.
    expect(all.every((f) => f.subject_id === under.id)).toBe(true);
    expect(await budgets(ids)).toEqual([330_000, 270_071]);

    // Each move: one amendment by the rule's agent, two change-budget operations (one per line), each carried out once at the supplier.
    const amendments = await env.db('booking_amendments').where({ campaign_id: campaignId }).orderBy('created_at');
    expect(amendments.map((a) => a.requested_by)).toEqual(Array(3).fill(`${org}-lead|agent:rule-${rule.id}`));
    for (const a of amendments) {
      const ops = await env.db('line_operations').where({ amendment_id: a.id }).orderBy('line_id');
      expect(ops.map((o) => [o.line_id, o.kind, o.status]).sort()).toEqual(
        [
          [onTrack.id, 'change-budget', 'applied'],
          [under.id, 'change-budget', 'applied'],
        ].sort(),
      );
    }
    for (const id of ids) {
      const atSupplier = await env.db('sandbox_ledger').where({ line_id: id }).whereNot({ operation: 'book' }).select('operation');
      expect([id, atSupplier.length]).toEqual([id, 3]);
    }
    // Each move: one approval, decided under the standing mandate by the person who granted it, one execute step, one receipt.
    const approvals = await env
      .db('agent_approvals')
      .where({ agent_client_id: `rule-${rule.id}` })
      .orderBy('created_at');
    expect(approvals.map((a) => [a.action_name, a.status, a.decided_by])).toEqual(
      Array(3).fill(['campaign.amend', 'approved', `${org}-lead`]),
    );
    expect(executed.map((f) => f.approval_id)).toEqual(approvals.map((a) => a.id));
    const steps = await env
      .db('agent_steps')
      .whereIn(
        'id',
        executed.map((f) => f.step_id),
      )
      .select('status', 'action_digest', 'approval_id');
    expect(steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    for (const s of steps) expect(s.action_digest).toBe(approvals.find((a) => a.id === s.approval_id)!.action_digest);
    const receipts = await env.db('agent_receipts').whereIn(
      'step_id',
      executed.map((f) => f.step_id),
    );
    expect(receipts.map((r) => r.response_status)).toEqual([202, 202, 202]);
    const journal = await env
      .db('mission_journal')
      .whereIn(
        'approval_id',
        approvals.map((a) => a.id),
      )
      .orderBy('seq');
    expect(
      journal
        .filter((j) => j.entry_type === 'action.approved')
        .every((j) => j.source === 'rules' && j.entry.standingMandate === `rule-${rule.id}`),
    ).toBe(true);
    expect(journal.filter((j) => j.entry_type === 'action.executed')).toHaveLength(3);

    // Every firing told once, with its outcome.
    const told = await env.db('webhook_events').where({ workspace_id: org, type: 'rule.fired' }).orderBy('seq');
    expect(told.map((e) => e.subject_id).sort()).toEqual(all.map((f) => f.id).sort());

    // The API shows the same firings.
    const listed = await json<{ firings: Array<{ id: string; outcome: string }> }>(
      await send(api, token, `/api/v1/rules/${rule.id}/firings?limit=100`, 'GET'),
    );
    expect(listed.firings.map((f) => f.id).sort()).toEqual(all.map((f) => f.id).sort());
  });
});

describe('guardrails under concurrent cycles, and a firing outside the mandate', () => {
  test('twenty cycles at once fire each line once and hold no more than the day’s most; beyond its mandate the rule asks a person, and carries out only what they approve', async () => {
    const org = 'org-rule-burst';
    const l = await launchPlan(
      env,
      api,
      [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 300_000 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 300_071 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 200_071 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 100_071 },
      ],
      org,
      { startDate: today(), endDate: addDays(today(), 29), maximumCommitmentMinor: 1_000_000 },
    );
    const booking = await waitForBooking(api, l.token, l.booking.id, (b) => b.lines.every((x) => x.status === 'confirmed'));
    const ids = booking.lines.map((x) => x.id);
    for (let d = 1; d <= 5; d++) await nextDay(org, l.token, ids);

    const lead = await approver(env, org);
    const rule = await enable(
      api,
      lead,
      await createRule(
        api,
        lead,
        moveRule(l.campaignId, {
          action: { kind: 'move-budget', amountMinor: 10_000, toLineId: ids[0] },
          guardrails: { maxMovedPerDayMinor: 15_000, maxMovedPerFlightMinor: 100_000, minLineBudgetMinor: 0, cooldownDays: 0 },
        }),
      ),
      // Every move is over this mandate's ceiling: each one waits for a person.
      1_000,
    );
    // The dry run the person saw before enabling it: over the five days so far, what it would have moved, day by day, within its guardrails.
    type Dry = { movedMinor: number; firings: Array<{ day: string; outcome: string; planned: { amountMinor: number | null } }> };
    const dry = (await json<{ dryRuns: Dry[] }>(await send(api, lead, `/api/v1/rules/${rule.id}/dry-runs`, 'GET'))).dryRuns[0]!;
    const acts = dry.firings.filter((f) => f.outcome === 'would-act');
    expect(acts.length).toBeGreaterThan(0);
    expect(dry.movedMinor).toBe(acts.reduce((s, f) => s + f.planned.amountMinor!, 0));
    for (const d of new Set(acts.map((f) => f.day)))
      expect(acts.filter((f) => f.day === d).reduce((s, f) => s + f.planned.amountMinor!, 0)).toBeLessThanOrEqual(15_000);
    expect(dry.firings.some((f) => f.outcome === 'held')).toBe(true);
    // Judged by a mandate of 1,000 an action, every move would have asked a person, and nothing would have moved.
    const asking = await json<{ dryRun: Dry }>(
      await send(api, lead, `/api/v1/rules/${rule.id}/dry-runs`, 'POST', { budgetCeilingMinor: 1_000 }),
    );
    expect(asking.dryRun.movedMinor).toBe(0);
    expect(asking.dryRun.firings.filter((f) => f.outcome === 'would-ask').length).toBeGreaterThan(0);
    expect(asking.dryRun.firings.every((f) => f.outcome !== 'would-act')).toBe(true);

    // The next day: the workers' own cycle runs as well as these twenty.
    await nextDay(org, l.token, ids);
    const { clock } = await json<{ clock: { today: string } }>(await api.fetch('/api/v1/sandbox/clock', { token: l.token }));
    const todays = async () => (await firings(rule.id)).filter((f) => String(f.evaluation_day) === clock.today);
    const before = await budgets(ids);
    await Promise.all(Array.from({ length: 20 }, () => cycle(org)));
    await until('every cycle of the day to settle', async () => (await todays()).every((f) => f.outcome !== 'executing'));
    const fired = await todays();
    // Each under-delivering line fired once; the day's 15,000 was held as 10,000 and 5,000, the third line held back.
    expect(fired.map((f) => f.subject_id).sort()).toEqual(ids.slice(1).sort());
    expect(fired.map((f) => [f.outcome, f.planned.amountMinor]).sort()).toEqual(
      [
        ['awaiting-approval', 10_000],
        ['awaiting-approval', 5_000],
        ['held', null],
      ].sort(),
    );
    expect(fired.reduce((s, f) => s + Number(f.moved_minor), 0)).toBe(15_000);
    expect(fired.find((f) => f.outcome === 'held')!.detail).toMatch(/day's most budget moved/);
    // Nothing changed at the suppliers: two actions wait for a person, prepared in the name of the one who enabled the rule.
    expect(await budgets(ids)).toEqual(before);
    expect(await env.db('booking_amendments').where({ campaign_id: l.campaignId }).count({ n: '*' })).toEqual([{ n: '0' }]);
    // (A cycle the clock's last move queued may have run once the rule was on, and fired for that day: its firings wait too.)
    const pending = await env.db('agent_approvals').where({ advertiser_id: org, status: 'pending' }).orderBy('created_at');
    const waiting = (await firings(rule.id)).filter((f) => f.outcome === 'awaiting-approval');
    expect(pending.map((a) => a.id).sort()).toEqual(waiting.map((f) => f.approval_id).sort());
    const asked = pending.filter((a) => fired.some((f) => f.approval_id === a.id));
    expect(asked.map((a) => [a.action_name, a.agent_client_id, a.user_id])).toEqual(Array(2).fill(['campaign.amend', null, `${org}-lead`]));

    // A person approves the smaller move and abandons the larger; the next cycle carries out the one and gives back the other's hold.
    const small = fired.find((f) => f.planned.amountMinor === 5_000)!;
    const large = fired.find((f) => f.planned.amountMinor === 10_000)!;
    const digest = (id: string) => asked.find((a) => a.id === id)!.action_digest as string;
    expect(
      (await post(api, lead, `/api/v1/agent/approvals/${small.approval_id}/approve`, { expectedActionDigest: digest(small.approval_id) }))
        .status,
    ).toBe(200);
    expect(
      (
        await post(api, lead, `/api/v1/agent/approvals/${large.approval_id}/abandon`, {
          expectedActionDigest: digest(large.approval_id),
          note: 'not now',
        })
      ).status,
    ).toBe(200);
    await Promise.all(Array.from({ length: 5 }, () => cycle(org)));
    // (A cycle the workers run may be the one that claimed it: wait for its outcome.)
    await until('the decided firings to be carried out', async () =>
      (await todays())
        .filter((f) => [small.id, large.id].includes(f.id))
        .every((f) => !['awaiting-approval', 'executing'].includes(f.outcome)),
    );
    await settled(ids);
    const after = await todays();
    expect(after.find((f) => f.id === small.id)).toMatchObject({ outcome: 'executed', moved_minor: '5000' });
    expect(after.find((f) => f.id === large.id)).toMatchObject({ outcome: 'failed', moved_minor: '0' });
    const expected = [...before];
    expected[0]! += 5_000;
    expected[ids.indexOf(small.subject_id)]! -= 5_000;
    expect(await budgets(ids)).toEqual(expected);
    expect(await env.db('booking_amendments').where({ campaign_id: l.campaignId }).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(
      await env
        .db('agent_receipts')
        .where({ step_id: after.find((f) => f.id === small.id)!.step_id })
        .count({ n: '*' }),
    ).toEqual([{ n: '1' }]);
  });
});

describe('evaluation on the production path', () => {
  test("moving the sandbox clock polls the suppliers, and the poll's rule cycle on the maintenance queue fires a notify-only rule once per line, told to subscribers", async () => {
    const org = 'org-rule-path';
    const { token, campaignId, onTrack, under } = await twoLineCampaign(env, api, org, 10);
    await subscribe(env, api, org, ['rule.fired']);
    const rule = await createRule(
      api,
      token,
      moveRule(campaignId, { condition: { subject: 'line', metric: 'delivered-spend-minor', operator: 'above', value: 0 } }),
    );
    expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days: 1 })).status).toBe(200);
    await until('the workers to fire the rule for both lines', async () => (await firings(rule.id)).length === 2);
    const fired = await firings(rule.id);
    expect(fired.map((f) => [f.subject_id, f.outcome, f.mode, Number(f.moved_minor)]).sort()).toEqual(
      [
        [onTrack.id, 'notified', 'notify-only', 0],
        [under.id, 'notified', 'notify-only', 0],
      ].sort(),
    );
    // Notify-only says what it would have done, and does nothing.
    expect(fired.find((f) => f.subject_id === under.id)!.planned).toMatchObject({
      action: 'move-budget',
      toLineId: onTrack.id,
      amountMinor: 10_000,
    });
    expect(await env.db('agent_approvals').where({ advertiser_id: org }).count({ n: '*' })).toEqual([{ n: '0' }]);
    await until(
      'the firings to be told',
      async () => (await env.db('webhook_events').where({ workspace_id: org, type: 'rule.fired' })).length === 2,
    );
    // Cycles again on the same day change nothing.
    await Promise.all([cycle(org), cycle(org)]);
    expect(await firings(rule.id)).toHaveLength(2);
  });
});

describe('a pause rule', () => {
  test('"CPM above X" pauses the line it holds for, as a governed line.pause under the mandate, and leaves the other running', async () => {
    const org = 'org-rule-cpm';
    const { token, campaignId, booking, onTrack, under } = await twoLineCampaign(env, api, org, 10);
    const lead = await approver(env, org);
    const rule = await enable(
      api,
      lead,
      await createRule(
        api,
        lead,
        moveRule(campaignId, {
          name: 'Pause expensive lines',
          condition: { subject: 'line', metric: 'cpm-minor', operator: 'above', value: 3_000 },
          action: { kind: 'pause-line' },
        }),
      ),
      0,
    );
    expect(rule.mandate).toMatchObject({ allowedActions: ['line.pause'], budgetCeilingMinor: 0 });
    await nextDay(org, token, [onTrack.id, under.id]);
    await cycle(org);
    await until('the rule to settle', async () => (await firings(rule.id)).every((f) => f.outcome !== 'executing'));
    // The CTV line's CPM (32.00) is above 30.00; the audio line's (14.00) is not.
    const fired = await firings(rule.id);
    expect(fired.map((f) => [f.subject_id, f.outcome, f.planned.action, f.planned.observed])).toEqual([
      [onTrack.id, 'executed', 'pause-line', 3_200],
    ]);
    const paused = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'stopped');
    expect(paused.lines[0]!.stop).toMatchObject({ kind: 'pause', by: `${org}-lead|agent:rule-${rule.id}` });
    expect(paused.lines[1]!.status).toBe('confirmed');
    const approval = await env.db('agent_approvals').where({ id: fired[0]!.approval_id }).first();
    expect([approval.action_name, approval.status, approval.decided_by]).toEqual(['line.pause', 'approved', `${org}-lead`]);
    expect(await env.db('sandbox_ledger').where({ line_id: onTrack.id, operation: 'pause' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });
});
