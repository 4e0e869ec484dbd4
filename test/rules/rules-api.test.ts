import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approver, createRule, enable, moveRule, send, twoLineCampaign, type RuleBody } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await env.db(table).where(where).count({ n: '*' }))[0]!.n);
const problem = async (res: Response) => [res.status, (await json<{ code: string }>(res)).code];
const readRule = async (token: string, id: string) =>
  (await json<{ rule: RuleBody }>(await send(api, token, `/api/v1/rules/${id}`, 'GET'))).rule;

describe('POST /api/v1/rules', () => {
  test('a person writes a rule over a campaign: it starts notify-only with no mandate; bad input is refused with problem+json and writes nothing', async () => {
    const org = 'org-rule1';
    const { token, campaignId, onTrack } = await twoLineCampaign(env, api, org);
    const refusals: Array<[unknown, number, string]> = [
      [{ ...moveRule(campaignId), extra: true }, 400, 'validation_failed'],
      [{ ...moveRule(campaignId), mode: 'active' }, 400, 'validation_failed'],
      [
        moveRule(campaignId, { condition: { subject: 'line', metric: 'cpm-minor', operator: 'above', value: 1, forDays: 0 } }),
        400,
        'validation_failed',
      ],
      [
        moveRule(campaignId, { condition: { subject: 'campaign', metric: 'cpm-minor', operator: 'above', value: 1 } }),
        400,
        'validation_failed',
      ],
      [moveRule(campaignId, { action: { kind: 'move-budget', amountMinor: 0 } }), 400, 'validation_failed'],
      // Outcomes are the campaign's: a cost per outcome is a campaign condition, and a campaign condition only notifies.
      [
        moveRule(campaignId, {
          condition: { subject: 'line', metric: 'cost-per-outcome-minor', outcome: 'signups', operator: 'above', value: 1 },
          action: { kind: 'notify' },
        }),
        400,
        'validation_failed',
      ],
      [
        moveRule(campaignId, {
          condition: { subject: 'campaign', metric: 'cost-per-outcome-minor', outcome: 'signups', operator: 'above', value: 1 },
        }),
        400,
        'validation_failed',
      ],
      [moveRule(campaignId, { action: { kind: 'move-budget', amountMinor: 5, toLineId: randomUUID() } }), 400, 'line_not_in_campaign'],
      [
        moveRule(campaignId, {
          guardrails: { maxMovedPerDayMinor: 2, maxMovedPerFlightMinor: 1, minLineBudgetMinor: 0, cooldownDays: 0 },
        }),
        400,
        'validation_failed',
      ],
      [
        moveRule(campaignId, { guardrails: { maxMovedPerDayMinor: 1, maxMovedPerFlightMinor: 1, minLineBudgetMinor: 0 } }),
        400,
        'validation_failed',
      ],
      [moveRule(randomUUID()), 404, 'not_found'],
    ];
    for (const [body, status, code] of refusals) {
      expect(await problem(await send(api, token, '/api/v1/rules', 'POST', body))).toEqual([status, code]);
    }
    // Another workspace's campaign is not found; a delegated agent cannot write rules; no token is 401.
    const stranger = await env.issuer.token({ org: 'org-rule1-other', user: 'eve' });
    expect(await problem(await send(api, stranger, '/api/v1/rules', 'POST', moveRule(campaignId)))).toEqual([404, 'not_found']);
    const agent = await env.issuer.token({ org, user: `${org}-buyer`, agent: 'planner-bot' });
    expect(await problem(await send(api, agent, '/api/v1/rules', 'POST', moveRule(campaignId)))).toEqual([403, 'human_required']);
    expect((await api.fetch('/api/v1/rules', { method: 'POST', body: '{}' })).status).toBe(401);
    expect(await count('rules', { advertiser_id: org })).toBe(0);

    const rule = await createRule(
      api,
      token,
      moveRule(campaignId, { action: { kind: 'move-budget', amountMinor: 10_000, toLineId: onTrack.id } }),
    );
    expect(rule).toMatchObject({ mode: 'notify-only', version: 1, agentClientId: `rule-${rule.id}`, mandate: null, lastFiring: null });
    expect(await count('rules', { advertiser_id: org })).toBe(1);
  });
});

describe('GET, PATCH and DELETE /api/v1/rules/{id}', () => {
  test("another workspace's rule is the same 404 as one that never existed, for every verb", async () => {
    const org = 'org-rule2';
    const { token, campaignId } = await twoLineCampaign(env, api, org);
    const rule = await createRule(api, token, moveRule(campaignId));
    const stranger = await env.issuer.token({ org: 'org-rule2-other', user: 'eve' });
    const unknown = await send(api, token, `/api/v1/rules/${randomUUID()}`, 'GET');
    const unknownBody = await json<Record<string, unknown>>(unknown);
    for (const [method, path, body] of [
      ['GET', `/api/v1/rules/${rule.id}`, undefined],
      ['PATCH', `/api/v1/rules/${rule.id}`, { expectedVersion: 1, name: 'x' }],
      ['DELETE', `/api/v1/rules/${rule.id}`, undefined],
      ['GET', `/api/v1/rules/${rule.id}/firings`, undefined],
      ['POST', `/api/v1/rules/${rule.id}/dry-runs`, {}],
      ['GET', `/api/v1/rules/${rule.id}/dry-runs`, undefined],
    ] as const) {
      const res = await send(api, stranger, path, method, body);
      const b = await json<Record<string, unknown>>(res);
      expect([method, path, res.status, { ...b, requestId: null }]).toEqual([method, path, 404, { ...unknownBody, requestId: null }]);
    }
    expect((await send(api, token, '/api/v1/rules/not-a-uuid', 'GET')).status).toBe(404);
    const listed = await json<{ rules: RuleBody[] }>(await send(api, stranger, '/api/v1/rules', 'GET'));
    expect(listed.rules).toEqual([]);
    expect(await readRule(token, rule.id)).toMatchObject({ version: 1, mode: 'notify-only' });
    expect(await count('rule_dry_runs', { rule_id: rule.id })).toBe(0);
  });

  test('making a rule active is a person’s approval of its mandate after a dry run of that version; a change to what it does puts it back to notify-only; refusals change nothing', async () => {
    const org = 'org-rule3';
    const { token, campaignId } = await twoLineCampaign(env, api, org);
    const lead = await approver(env, org);
    const rule = await createRule(api, token, moveRule(campaignId));
    const path = `/api/v1/rules/${rule.id}`;
    const refusals: Array<[string, unknown, number, string]> = [
      [token, { expectedVersion: 1 }, 400, 'validation_failed'],
      [token, { expectedVersion: 1, name: 'x', extra: 1 }, 400, 'validation_failed'],
      [token, { expectedVersion: 1, mode: 'active' }, 400, 'validation_failed'],
      [token, { expectedVersion: 1, mandate: { budgetCeilingMinor: 5 } }, 400, 'validation_failed'],
      [token, { expectedVersion: 2, name: 'x' }, 409, 'version_conflict'],
      // Without agent:approve a person cannot grant the mandate.
      [token, { expectedVersion: 1, mode: 'active', mandate: { budgetCeilingMinor: 20_000 } }, 403, 'permission_required'],
      // No dry run of this version yet.
      [lead, { expectedVersion: 1, mode: 'active', mandate: { budgetCeilingMinor: 20_000 } }, 409, 'dry_run_required'],
    ];
    for (const [who, body, status, code] of refusals) {
      expect(await problem(await send(api, who, path, 'PATCH', body))).toEqual([status, code]);
    }
    expect(await readRule(token, rule.id)).toMatchObject({ version: 1, mode: 'notify-only', mandate: null });
    expect(await count('agent_mandates', { advertiser_id: org })).toBe(0);

    const active = await enable(api, lead, rule, 20_000);
    expect(active).toMatchObject({
      mode: 'active',
      version: 2,
      mandate: { allowedActions: ['campaign.amend'], budgetCeilingMinor: 20_000 },
      lastDryRun: { id: expect.any(String) },
    });
    // The rule's mandate is an ordinary agent mandate, listed with the others.
    const mandates = await json<{ mandates: Array<{ agentClientId: string }> }>(await send(api, lead, '/api/v1/agent/mandates', 'GET'));
    expect(mandates.mandates.map((m) => m.agentClientId)).toEqual([`rule-${rule.id}`]);

    // Renaming keeps it active; changing its guardrails makes it a new rule, notify-only, its mandate withdrawn.
    const renamed = await json<{ rule: RuleBody }>(await send(api, token, path, 'PATCH', { expectedVersion: 2, name: 'Renamed' }));
    expect(renamed.rule).toMatchObject({ version: 3, mode: 'active' });
    const redefined = await send(api, token, path, 'PATCH', {
      expectedVersion: 3,
      guardrails: { maxMovedPerDayMinor: 5_000, maxMovedPerFlightMinor: 5_000, minLineBudgetMinor: 0, cooldownDays: 1 },
    });
    expect((await json<{ rule: RuleBody }>(redefined)).rule).toMatchObject({ version: 4, mode: 'notify-only', mandate: null });
    expect(await count('agent_mandates', { advertiser_id: org })).toBe(0);
    // Its earlier dry run was of another version: it must be run again.
    expect(
      await problem(await send(api, lead, path, 'PATCH', { expectedVersion: 4, mode: 'active', mandate: { budgetCeilingMinor: 1 } })),
    ).toEqual([409, 'dry_run_required']);
    // A notification has nothing to do on its own.
    const notify = await createRule(api, token, { ...moveRule(campaignId), action: { kind: 'notify' } });
    await send(api, lead, `/api/v1/rules/${notify.id}/dry-runs`, 'POST', {});
    expect(
      await problem(
        await send(api, lead, `/api/v1/rules/${notify.id}`, 'PATCH', {
          expectedVersion: 1,
          mode: 'active',
          mandate: { budgetCeilingMinor: 1 },
        }),
      ),
    ).toEqual([409, 'nothing_to_enable']);
  });

  test('a deleted rule is gone from reads and loses its mandate; its record stays', async () => {
    const org = 'org-rule4';
    const { token, campaignId } = await twoLineCampaign(env, api, org);
    const lead = await approver(env, org);
    const rule = await enable(api, lead, await createRule(api, lead, moveRule(campaignId)), 10_000);
    expect(await count('agent_mandates', { advertiser_id: org, agent_client_id: `rule-${rule.id}` })).toBe(1);
    const agent = await env.issuer.token({ org, user: `${org}-buyer`, agent: 'planner-bot' });
    expect(await problem(await send(api, agent, `/api/v1/rules/${rule.id}`, 'DELETE'))).toEqual([403, 'human_required']);
    const res = await send(api, token, `/api/v1/rules/${rule.id}`, 'DELETE');
    expect([res.status, await json(res)]).toEqual([200, { deleted: true, id: rule.id }]);
    expect((await send(api, token, `/api/v1/rules/${rule.id}`, 'GET')).status).toBe(404);
    expect((await send(api, token, `/api/v1/rules/${rule.id}`, 'DELETE')).status).toBe(404);
    expect((await json<{ rules: RuleBody[] }>(await send(api, token, `/api/v1/rules?campaignId=${campaignId}`, 'GET'))).rules).toEqual([]);
    expect(await count('agent_mandates', { advertiser_id: org })).toBe(0);
    expect(await count('rule_dry_runs', { rule_id: rule.id })).toBe(1);
  });
});

describe('POST /api/v1/rules/{id}/dry-runs', () => {
  test('a dry run is stored and listed; a bad body is refused and stores nothing', async () => {
    const org = 'org-rule5';
    const { token, campaignId } = await twoLineCampaign(env, api, org);
    const rule = await createRule(api, token, moveRule(campaignId));
    expect(await problem(await send(api, token, `/api/v1/rules/${rule.id}/dry-runs`, 'POST', { extra: 1 }))).toEqual([
      400,
      'validation_failed',
    ]);
    expect(await count('rule_dry_runs', { rule_id: rule.id })).toBe(0);
    const res = await send(api, token, `/api/v1/rules/${rule.id}/dry-runs`, 'POST', { budgetCeilingMinor: 5_000 });
    expect(res.status).toBe(201);
    const { dryRun } = await json<{ dryRun: { id: string; ruleVersion: number; firings: unknown[]; movedMinor: number } }>(res);
    // The flight began today: no day is over, so nothing would have fired.
    expect(dryRun).toMatchObject({ ruleVersion: 1, firings: [], movedMinor: 0 });
    const listed = await json<{ dryRuns: Array<{ id: string }> }>(await send(api, token, `/api/v1/rules/${rule.id}/dry-runs`, 'GET'));
    expect(listed.dryRuns.map((d) => d.id)).toEqual([dryRun.id]);
    expect((await readRule(token, rule.id)).lastDryRun).toMatchObject({ id: dryRun.id });
  });
});
