import { createHash, randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTestEnv, json, type TestEnv } from '../support/api';
import { post, type BookingBody } from '../support/bookings';
import { approvedCampaign } from '../agent/support';
import { campaignOf, measurementState, rowsJson } from '../measurement/support';
import { CLIENT_ID, call, connectAs, startMcpWorld, type McpWorld } from './support';

let env: TestEnv;
let world: McpWorld;
let human: string;
let client: Client;

/** Token exchanges the embedded server answered (the endpoint reaches it in process, not over HTTP). */
let exchanges = 0;
const tokenRequests = () => exchanges;

beforeAll(async () => {
  env = await createTestEnv();
  world = await startMcpWorld(env);
  world.api.deps.agentEndpoint!.devServer!.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    if (ctx.oidc.params?.grant_type === 'urn:ietf:params:oauth:grant-type:token-exchange') exchanges++;
  });
  human = await world.human('acme', 'alice');
  const mandate = await post(
    world.api,
    human,
    `/api/v1/agent/mandates/${CLIENT_ID}`,
    { allowedActions: ['campaign.launch', 'campaign.stop'], budgetCeilingMinor: 1_000_000, currency: 'GBP' },
    'PUT',
  );
  expect(mandate.status).toBe(200);
  ({ client } = await connectAs(world, { user: 'alice', workspace: 'acme' }));
});
afterAll(async () => {
  await client?.close();
  await env.close();
});

describe('the governed flow through /mcp', () => {
  test('prepare through /mcp, approve over REST by a person, execute through /mcp with the step id and digest; a replay returns the receipt', async () => {
    const campaignId = await approvedCampaign(world.api, human, 12_000);
    const prepared = await call(client, 'prepare_action', {
      name: 'campaign.launch',
      parameters: { campaignId },
      budgetMinor: 15_000,
      currency: 'GBP',
    });
    expect(prepared.isError).toBeFalsy();
    const { approvalId, actionDigest, runId } = prepared.structuredContent as { approvalId: string; actionDigest: string; runId: string };

    const pending = await call(client, 'get_approval', { id: approvalId });
    expect(pending.structuredContent).toMatchObject({
      approval: { id: approvalId, status: 'pending', agentClientId: CLIENT_ID, executeStepId: null },
    });

    // Without a person's approval there is no step to execute, and nothing is booked.
    const early = await call(client, 'execute_action', {
      stepId: randomUUID(),
      actionDigest,
      name: 'campaign.launch',
      parameters: { campaignId },
    });
    expect(early.isError).toBe(true);
    expect(early.structuredContent).toMatchObject({ status: 403, code: 'execution_binding_invalid', recovery: 'terminal' });
    expect(await env.db('bookings').where({ campaign_id: campaignId }).count('* as n')).toEqual([{ n: '0' }]);

    const approved = await post(world.api, human, `/api/v1/agent/approvals/${approvalId}/approve`, { expectedActionDigest: actionDigest });
    expect(approved.status).toBe(200);
    const stepId = (await json<{ executeStep: { id: string } }>(approved)).executeStep.id;
    const status = await call(client, 'get_approval', { id: approvalId });
    expect(status.structuredContent).toMatchObject({ approval: { status: 'approved', executeStepId: stepId, decidedBy: 'alice' } });

    const executed = await call(client, 'execute_action', { stepId, actionDigest, name: 'campaign.launch', parameters: { campaignId } });
    expect(executed.isError).toBeFalsy();
    const booking = (executed.structuredContent as { booking: BookingBody }).booking;
    expect(booking.campaignId).toBe(campaignId);
    expect(booking.events.length).toBeGreaterThan(0);
    for (const e of booking.events) expect(e).toMatchObject({ actor: 'agent', source: 'mcp', actorId: `alice|agent:${CLIENT_ID}` });

    const replay = await call(client, 'execute_action', { stepId, actionDigest, name: 'campaign.launch', parameters: { campaignId } });
    expect((replay.structuredContent as { booking: BookingBody }).booking.id).toBe(booking.id);
    expect(await env.db('bookings').where({ campaign_id: campaignId }).count('* as n')).toEqual([{ n: '1' }]);

    const journal = await env.db('mission_journal').where({ run_id: runId }).orderBy('seq').select('entry_type', 'actor', 'source');
    expect(journal).toEqual([
      { entry_type: 'action.prepared', actor: 'agent', source: 'mcp' },
      { entry_type: 'action.approved', actor: 'human', source: 'api' },
      { entry_type: 'action.executed', actor: 'agent', source: 'mcp' },
    ]);

    const evidence = await call(client, 'record_evidence', {
      id: runId,
      kind: 'booking.observed',
      source: 'assistant',
      content: { bookingId: booking.id },
    });
    expect(evidence.isError).toBeFalsy();
    const run = await call(client, 'get_run', { id: runId });
    expect(run.structuredContent).toMatchObject({ run: { evidence: [expect.objectContaining({ kind: 'booking.observed' })] } });
  });

  test('an execution that is not the approved action is refused and books nothing', async () => {
    const campaignId = await approvedCampaign(world.api, human, 12_000);
    const other = await approvedCampaign(world.api, human, 12_000);
    const prepared = await call(client, 'prepare_action', {
      name: 'campaign.launch',
      parameters: { campaignId },
      budgetMinor: 15_000,
      currency: 'GBP',
    });
    const { approvalId, actionDigest } = prepared.structuredContent as { approvalId: string; actionDigest: string };
    const approved = await json<{ executeStep: { id: string } }>(
      await post(world.api, human, `/api/v1/agent/approvals/${approvalId}/approve`, { expectedActionDigest: actionDigest }),
    );
    const wrong = await call(client, 'execute_action', {
      stepId: approved.executeStep.id,
      actionDigest,
      name: 'campaign.launch',
      parameters: { campaignId: other },
    });
    expect(wrong.structuredContent).toMatchObject({ status: 409, code: 'action_changed' });
    expect(await env.db('bookings').whereIn('campaign_id', [campaignId, other]).count('* as n')).toEqual([{ n: '0' }]);
  });

  test('the exchanged API credential is reused until shortly before it expires: more tool calls, no more exchanges', async () => {
    const before = tokenRequests();
    // The connection's first tool calls exchanged the grant once.
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect((await call(client, 'list_campaigns')).isError).toBeFalsy();
    expect(tokenRequests()).toBe(before);
  });

  test('a read through /mcp is the REST operation: the same campaigns as GET /api/v1/campaigns', async () => {
    const viaMcp = await call(client, 'list_campaigns', { limit: 100 });
    const viaRest = await json(await world.api.fetch('/api/v1/campaigns?limit=100', { token: human }));
    expect(viaMcp.structuredContent).toEqual(viaRest);
  });

  test('the workspace overview and billing summary through /mcp are their REST operations', async () => {
    const overview = await call(client, 'workspace_overview', {});
    expect(overview.isError).toBeFalsy();
    expect(overview.structuredContent).toEqual(await json(await world.api.fetch('/api/v1/workspace/overview', { token: human })));
    const summary = await call(client, 'billing_summary', {});
    expect(summary.structuredContent).toEqual(await json(await world.api.fetch('/api/v1/billing/summary', { token: human })));
    const refused = await call(client, 'billing_summary', { period: '2999-01' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ status: 400, recovery: 'correctable' });
  });

  test('arguments that do not fit a tool’s schema are a tool error with problem details an agent can act on', async () => {
    const res = await call(client, 'billing_summary', { period: '2026-11', unexpected: true });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toMatchObject({ status: 400, code: 'invalid_tool_arguments', recovery: 'correctable' });
  });

  test('a tool keeps to the grant’s product scope like its REST route: a DOOH-only grant cannot see a CTV approval', async () => {
    const campaignId = await approvedCampaign(world.api, human, 9_000);
    const prepared = await call(client, 'prepare_action', {
      name: 'campaign.launch',
      parameters: { campaignId },
      budgetMinor: 12_000,
      currency: 'GBP',
    });
    expect(prepared.isError).toBeFalsy();
    const { approvalId, runId } = prepared.structuredContent as { approvalId: string; runId: string };
    const dooh = await connectAs(world, { user: 'alice', workspace: 'acme', product: 'flightdeck-dooh' });
    try {
      for (const [tool, args] of [
        ['get_approval', { id: approvalId }],
        ['get_run', { id: runId }],
      ] as const) {
        const res = await call(dooh.client, tool, args);
        expect(res.isError).toBe(true);
        expect(res.structuredContent).toMatchObject({ status: 404, code: 'not_found' });
      }
    } finally {
      await dooh.client.close();
    }
  });

  test('an approved campaign.stop runs through execute_action as its REST operation does, and amendments are listed', async () => {
    const campaignId = await approvedCampaign(world.api, human, 7_000);
    const launched = await post(world.api, human, `/api/v1/campaigns/${campaignId}/launch`);
    expect(launched.status).toBe(202);
    const prepared = await call(client, 'prepare_action', {
      name: 'campaign.stop',
      parameters: { campaignId },
      budgetMinor: 0,
      currency: 'GBP',
    });
    expect(prepared.isError).toBeFalsy();
    const { approvalId, actionDigest } = prepared.structuredContent as { approvalId: string; actionDigest: string };
    const approved = await post(world.api, human, `/api/v1/agent/approvals/${approvalId}/approve`, { expectedActionDigest: actionDigest });
    const stepId = (await json<{ executeStep: { id: string } }>(approved)).executeStep.id;
    const stopped = await call(client, 'execute_action', { stepId, actionDigest, name: 'campaign.stop', parameters: { campaignId } });
    expect(stopped.isError).toBeFalsy();
    const result = stopped.structuredContent as { booking: BookingBody; requested: string[] };
    // Nobody had sent the line yet: it ends at once, recorded as the agent's act through /mcp.
    expect(result.booking.lines[0]).toMatchObject({ status: 'stopped', stop: { kind: 'end' } });
    expect(result.booking.events.find((e) => e.action === 'line.stop-requested')).toMatchObject({ actor: 'agent', source: 'mcp' });
    const listed = await call(client, 'list_amendments', { id: campaignId });
    expect(listed.structuredContent).toEqual({ amendments: [] });
    // Delivery through /mcp: the same answer as the REST operation; no line ran, so nothing delivered.
    const delivered = await call(client, 'get_delivery', { id: campaignId });
    expect(delivered.isError).toBeFalsy();
    expect(delivered.structuredContent).toMatchObject({
      delivery: { campaignId, totals: { spendMinor: 0 }, outlook: { classification: 'on-track', spend: { projectedMinor: 0 } }, lines: [] },
    });
    expect((await call(client, 'get_delivery', { id: campaignId, from: 'yesterday' })).isError).toBe(true);
  });
});

describe('an action whose operation takes raw bytes', () => {
  test('outcomes.import runs through execute_action with its rows as content, bound to their SHA-256, and replays its receipt', async () => {
    const mandate = await post(
      world.api,
      human,
      `/api/v1/agent/mandates/${CLIENT_ID}`,
      { allowedActions: ['campaign.launch', 'outcomes.import'], budgetCeilingMinor: 1_000_000, currency: 'GBP' },
      'PUT',
    );
    expect(mandate.status).toBe(200);
    const campaignId = await campaignOf(world.api, human);
    const rows = rowsJson([{ date: '2026-01-01', market: 'london', metric: 'conversions', value: 7 }]);
    const contentSha256 = createHash('sha256').update(rows).digest('hex');
    const prepared = await call(client, 'prepare_action', {
      name: 'outcomes.import',
      parameters: { campaignId, contentSha256 },
      budgetMinor: 0,
      currency: 'GBP',
    });
    expect(prepared.isError).toBeFalsy();
    const { approvalId, actionDigest } = prepared.structuredContent as { approvalId: string; actionDigest: string };
    const approved = await post(world.api, human, `/api/v1/agent/approvals/${approvalId}/approve`, { expectedActionDigest: actionDigest });
    const stepId = (await json<{ executeStep: { id: string } }>(approved)).executeStep.id;
    const execute = (content?: { type: string; text: string }) =>
      call(client, 'execute_action', {
        stepId,
        actionDigest,
        name: 'outcomes.import',
        parameters: { campaignId, contentSha256 },
        ...(content ? { content } : {}),
      });
    const before = await measurementState(env);

    const missing = await execute();
    expect(missing.structuredContent).toMatchObject({ status: 400, code: 'content_required', recovery: 'correctable' });
    const other = await execute({
      type: 'application/json',
      text: rowsJson([{ date: '2026-01-01', market: 'london', metric: 'conversions', value: 70 }]),
    });
    expect(other.structuredContent).toMatchObject({ status: 409, code: 'action_changed' });
    expect(await measurementState(env)).toEqual(before);

    const done = await execute({ type: 'application/json', text: rows });
    expect(done.isError).toBeFalsy();
    const batch = (done.structuredContent as { batch: { id: string; agentClientId: string; rowCount: number } }).batch;
    expect(batch).toMatchObject({ agentClientId: CLIENT_ID, rowCount: 1 });
    const replay = await execute({ type: 'application/json', text: rows });
    expect((replay.structuredContent as { batch: { id: string } }).batch.id).toBe(batch.id);
    expect(await env.db('outcome_import_batches').where({ campaign_id: campaignId })).toHaveLength(1);
    expect(await env.db('campaign_outcomes').where({ campaign_id: campaignId }).select('value')).toEqual([{ value: 7 }]);
  });

  test('content is refused for an action whose operation takes JSON parameters', async () => {
    const res = await call(client, 'execute_action', {
      stepId: randomUUID(),
      actionDigest: 'a'.repeat(64),
      name: 'campaign.launch',
      parameters: { campaignId: randomUUID() },
      content: { type: 'application/json', text: '{}' },
    });
    expect(res.structuredContent).toMatchObject({ status: 400, code: 'unexpected_content' });
  });
});
