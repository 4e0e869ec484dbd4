import { randomUUID } from 'node:crypto';
import { json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { SPENDER_PERMISSIONS } from '../support/issuer';
import { until } from '../support/wait';
import { pollSupplier } from '../support/delivery-poll';
import { addDays } from '../../shared/dates';
import { evaluateRules } from '../../shared/rules/rule-evaluation';

export const today = () => new Date().toISOString().slice(0, 10);

/** A move of 10,000 from a line projected to under-deliver by more than 15% two days running, within tight guardrails. */
export const moveRule = (campaignId: string, overrides: Record<string, unknown> = {}) => ({
  name: 'Move budget off an under-delivering line',
  campaignId,
  condition: { subject: 'line', metric: 'projected-under-delivery-percent', operator: 'above', value: 15, forDays: 2 },
  action: { kind: 'move-budget', amountMinor: 10_000 },
  guardrails: { maxMovedPerDayMinor: 10_000, maxMovedPerFlightMinor: 30_000, minLineBudgetMinor: 50_000, cooldownDays: 2 },
  ...overrides,
});

export interface RuleBody {
  id: string;
  version: number;
  mode: string;
  agentClientId: string;
  mandate: { allowedActions: string[]; budgetCeilingMinor: number } | null;
  lastFiring: { outcome: string } | null;
  lastDryRun: { id: string } | null;
}

export function send(api: TestApi, token: string, path: string, method: string, body?: unknown) {
  return api.fetch(path, {
    method,
    token,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
}

export async function createRule(api: TestApi, token: string, body: unknown): Promise<RuleBody> {
  const res = await send(api, token, '/api/v1/rules', 'POST', body);
  if (res.status !== 201) throw new Error(`create rule failed: ${res.status} ${await res.text()}`);
  return (await json<{ rule: RuleBody }>(res)).rule;
}

/** A person who may approve agent actions (and so grant a rule its mandate). */
export const approver = (env: TestEnv, org: string) =>
  env.issuer.token({ org, user: `${org}-lead`, permissions: ['agent:approve', ...SPENDER_PERMISSIONS] });

/** Dry run, then make active with a mandate: the person's two steps. */
export async function enable(api: TestApi, token: string, rule: RuleBody, budgetCeilingMinor: number): Promise<RuleBody> {
  const dry = await send(api, token, `/api/v1/rules/${rule.id}/dry-runs`, 'POST', {});
  if (dry.status !== 201) throw new Error(`dry run failed: ${dry.status} ${await dry.text()}`);
  const res = await send(api, token, `/api/v1/rules/${rule.id}`, 'PATCH', {
    expectedVersion: rule.version,
    mode: 'active',
    mandate: { budgetCeilingMinor },
  });
  if (res.status !== 200) throw new Error(`enable failed: ${res.status} ${await res.text()}`);
  return (await json<{ rule: RuleBody }>(res)).rule;
}

/**
 * A sandbox campaign from today over `days`: an on-track CTV line and an audio line whose budget
 * ends in 71 (the sandbox under-delivers it, at 60% of its budget).
 */
export async function twoLineCampaign(env: TestEnv, api: TestApi, org: string, days = 30) {
  const l = await launchPlan(
    env,
    api,
    [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 300_000 },
      { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 300_071 },
    ],
    org,
    { startDate: today(), endDate: addDays(today(), days - 1), maximumCommitmentMinor: 700_000 },
  );
  const booking = await waitForBooking(api, l.token, l.booking.id, (b) => b.lines.every((x) => x.status === 'confirmed'));
  return { ...l, booking, onTrack: booking.lines[0]!, under: booking.lines[1]!, key: randomUUID() };
}

/** One cycle of the workspace's rules, as the maintenance job runs it. */
export const ruleCycle = (env: TestEnv, org: string) =>
  evaluateRules(env.db, { tolerance: 0.15, pollEveryMs: 3_600_000, advertiserId: org });

export const ruleFirings = (env: TestEnv, ruleId: string) =>
  env.db('rule_firings').where({ rule_id: ruleId }).orderBy(['evaluation_day', 'created_at']);

export const settled = (env: TestEnv, lineIds: string[]) =>
  until(
    'the line operations in hand to settle',
    async () => (await env.db('booking_lines').whereIn('id', lineIds).whereNotNull('operation_id').count({ n: '*' }))[0]!.n === '0',
  );

/** One day on the workspace's clock: the clock moves, each supplier's delivery is in, the line operations in hand settle. */
export async function nextDay(env: TestEnv, api: TestApi, org: string, token: string, lineIds: string[]) {
  const moved = await post(api, token, '/api/v1/sandbox/clock/advance', { days: 1 });
  if (moved.status !== 200) throw new Error(`clock advance failed: ${moved.status} ${await moved.text()}`);
  // (The clock's move queues the workers' polls too: whichever runs first records the figures, once.)
  for (const key of ['sandbox-ctv', 'sandbox-audio']) await pollSupplier(env.db, key, { advertiserId: org });
  await settled(env, lineIds);
}
