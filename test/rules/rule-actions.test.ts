import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post, readBooking, waitForBooking } from '../support/bookings';
import { until } from '../support/wait';
import { addDays } from '../../shared/dates';
import { approver, createRule, enable, moveRule, nextDay, ruleCycle, ruleFirings, twoLineCampaign } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const clockToday = async (token: string) =>
  (await json<{ clock: { today: string } }>(await api.fetch('/api/v1/sandbox/clock', { token }))).clock.today;
/** 0 Monday … 6 Sunday, as a rule's window counts weekdays. */
const weekday = (day: string) => (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;

test('a resume rule resumes the line a person paused once it falls behind pace, as a governed line.resume under the mandate with one receipt; a running line is left alone', async () => {
  const org = 'org-rule-resume';
  const { token, booking, onTrack, under } = await twoLineCampaign(env, api, org, 10);
  const ids = [onTrack.id, under.id];
  await nextDay(env, api, org, token, ids);
  // A person pauses the CTV line after its first day.
  const ctv = (await readBooking(api, token, booking.id)).lines[0]!;
  expect(
    (await post(api, token, `/api/v1/bookings/${booking.id}/lines/${onTrack.id}/pause`, { expectedVersion: ctv.version })).status,
  ).toBe(202);
  await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'stopped');

  const lead = await approver(env, org);
  const rule = await enable(
    api,
    lead,
    await createRule(
      api,
      lead,
      moveRule(booking.campaignId, {
        name: 'Resume lines that fall behind',
        condition: { subject: 'line', metric: 'pacing-percent', operator: 'below', value: 80 },
        action: { kind: 'resume-line' },
      }),
    ),
    0,
  );
  expect(rule.mandate).toMatchObject({ allowedActions: ['line.resume'], budgetCeilingMinor: 0 });

  // A day paused: the CTV line has delivered one day of two (about half its pace); the audio line,
  // under-delivering at 60%, is behind pace too but running, so there is nothing to resume.
  await nextDay(env, api, org, token, ids);
  await ruleCycle(env, org);
  await until('the rule to settle', async () => (await ruleFirings(env, rule.id)).every((f) => f.outcome !== 'executing'));
  const fired = await ruleFirings(env, rule.id);
  expect(fired.map((f) => [f.subject_id, f.outcome, f.planned.action])).toEqual([[onTrack.id, 'executed', 'resume-line']]);
  expect(fired[0]!.planned.observed).toBeLessThan(80);

  const resumed = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed');
  expect(resumed.lines[0]!.stop).toBeNull();
  expect(resumed.lines[1]!.status).toBe('confirmed');
  // One resume operation, asked in the name of the person who granted the mandate, through the rule's agent; carried out once.
  const ops = await env.db('line_operations').where({ line_id: onTrack.id }).orderBy('created_at');
  expect(ops.map((o) => [o.kind, o.requested_by, o.status])).toEqual([
    ['pause', `${org}-buyer`, 'applied'],
    ['resume', `${org}-lead|agent:rule-${rule.id}`, 'applied'],
  ]);
  expect(await env.db('sandbox_ledger').where({ line_id: onTrack.id, operation: 'resume' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  // The governed flow: one approval decided under the standing mandate, one step, one receipt.
  const approval = await env.db('agent_approvals').where({ id: fired[0]!.approval_id }).first();
  expect([approval.action_name, approval.status, approval.decided_by, approval.agent_client_id]).toEqual([
    'line.resume',
    'approved',
    `${org}-lead`,
    `rule-${rule.id}`,
  ]);
  const step = await env.db('agent_steps').where({ id: fired[0]!.step_id }).first();
  expect([step.status, step.action_digest, step.approval_id]).toEqual(['succeeded', approval.action_digest, approval.id]);
  expect((await env.db('agent_receipts').where({ step_id: step.id })).map((r) => r.response_status)).toEqual([202]);

  // The next day the line is running: nothing more to resume, however many cycles run.
  await nextDay(env, api, org, token, ids);
  await Promise.all([ruleCycle(env, org), ruleCycle(env, org)]);
  expect(await ruleFirings(env, rule.id)).toHaveLength(1);
});

test("a rule's time window: a condition that holds outside it (before its first day, on a weekday it leaves out, after its last day) does not fire; inside it, it does", async () => {
  const org = 'org-rule-window';
  const { token, booking, onTrack, under } = await twoLineCampaign(env, api, org, 10);
  const ids = [onTrack.id, under.id];
  const start = await clockToday(token);
  // Days 1..4 of the flight: the window opens on day 2 and closes after day 3, and on day 3's weekday only.
  const [d1, d2, d3, d4] = [1, 2, 3, 4].map((k) => addDays(start, k)) as [string, string, string, string];
  const cpm = { subject: 'line', metric: 'cpm-minor', operator: 'above', value: 3_000 };
  const guardrails = { maxMovedPerDayMinor: 0, maxMovedPerFlightMinor: 0, minLineBudgetMinor: 0, cooldownDays: 0 };
  const lead = await approver(env, org);
  const windowed = await enable(
    api,
    lead,
    await createRule(
      api,
      lead,
      moveRule(booking.campaignId, {
        name: 'Pause expensive lines, on the day we choose',
        condition: cpm,
        action: { kind: 'pause-line' },
        guardrails: { ...guardrails, window: { from: d2, until: d3, weekdays: [weekday(d3)] } },
      }),
    ),
    0,
  );
  // The same condition without a window, told only: it shows the condition held on each of those days.
  const unbounded = await createRule(
    api,
    lead,
    moveRule(booking.campaignId, { name: 'Expensive lines', condition: cpm, action: { kind: 'notify' }, guardrails }),
  );
  const firedOn = async (ruleId: string, day: string) => (await ruleFirings(env, ruleId)).filter((f) => String(f.evaluation_day) === day);

  for (const day of [d1, d2]) {
    await nextDay(env, api, org, token, ids);
    expect(await clockToday(token)).toBe(day);
    await ruleCycle(env, org);
    expect((await firedOn(unbounded.id, day)).map((f) => [f.subject_id, f.outcome])).toEqual([[onTrack.id, 'notified']]);
    expect(await firedOn(windowed.id, day)).toEqual([]);
    expect((await readBooking(api, token, booking.id)).lines[0]!.status).toBe('confirmed');
  }
  // Day 3: inside the window, the rule pauses the CTV line (its CPM 32.00 is above 30.00).
  await nextDay(env, api, org, token, ids);
  expect(await clockToday(token)).toBe(d3);
  await ruleCycle(env, org);
  await until('the rule to settle', async () => (await ruleFirings(env, windowed.id)).every((f) => f.outcome !== 'executing'));
  expect((await firedOn(windowed.id, d3)).map((f) => [f.subject_id, f.outcome, f.planned.action])).toEqual([
    [onTrack.id, 'executed', 'pause-line'],
  ]);
  const paused = await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'stopped');
  expect(paused.lines[0]!.stop).toMatchObject({ kind: 'pause', by: `${org}-lead|agent:rule-${windowed.id}` });

  // Day 4: after the window. A person resumes the line; the condition holds again, and the rule does not fire.
  expect(
    (await post(api, token, `/api/v1/bookings/${booking.id}/lines/${onTrack.id}/resume`, { expectedVersion: paused.lines[0]!.version }))
      .status,
  ).toBe(202);
  await waitForBooking(api, token, booking.id, (b) => b.lines[0]!.status === 'confirmed');
  await nextDay(env, api, org, token, ids);
  expect(await clockToday(token)).toBe(d4);
  await ruleCycle(env, org);
  expect((await firedOn(unbounded.id, d4)).map((f) => f.subject_id)).toEqual([onTrack.id]);
  expect(await firedOn(windowed.id, d4)).toEqual([]);
  expect((await readBooking(api, token, booking.id)).lines[0]!.status).toBe('confirmed');
  expect(await env.db('sandbox_ledger').where({ line_id: onTrack.id, operation: 'pause' }).count({ n: '*' })).toEqual([{ n: '1' }]);
});
