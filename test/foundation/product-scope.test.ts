import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, waitForBooking } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { syncAudience, syncBody, waitForCohort } from '../audiences/support';

/**
 * Product scope on every private operation, read from the OpenAPI document itself: a
 * DOOH-only caller of the same workspace must find every CTV resource exactly as absent as
 * another tenant's (404), be refused creating CTV things (403), and change nothing.
 */

type Scope = { resource: string; param: string } | 'request' | 'filtered' | 'caller' | 'staff';
interface Operation {
  method: string;
  path: string;
  operationId: string;
  scope: Scope | undefined;
}

const PERMISSIONS = ['agent:approve', 'operator:reconcile', 'plan:approve', 'campaign:launch'];

let env: TestEnv;
let api: TestApi;
let ctv: string;
let dooh: string;
let operations: Operation[];
/** One CTV resource of each scoped kind, and values for the other path parameters. */
const fixture: Record<string, string> = {};
const paramValue: Record<string, string> = {};

async function created(res: Response, what: string): Promise<Record<string, unknown>> {
  if (res.status >= 300) throw new Error(`${what} failed: ${res.status} ${await res.text()}`);
  return json(res);
}

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  const workers = await env.workers();
  ctv = await env.issuer.token({ org: 'org-a', user: 'ctv-buyer', product: 'flightdeck-ctv', permissions: PERMISSIONS });
  dooh = await env.issuer.token({ org: 'org-a', user: 'dooh-buyer', product: 'flightdeck-dooh', permissions: PERMISSIONS });

  // A CTV campaign, its plan, a confirmed booking and an audience cohort synced from it.
  const lines = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }];
  const { campaignId, planId, planVersion } = await draftCampaign(api, ctv, lines);
  await approve(api, ctv, campaignId, planVersion);
  const { booking } = (await created(await post(api, ctv, `/api/v1/campaigns/${campaignId}/launch`), 'launch')) as {
    booking: { id: string; lines: Array<{ id: string }> };
  };
  await waitForBooking(api, ctv, booking.id, (b) => b.status === 'confirmed');
  const { cohort, attempt } = (await created(await syncAudience(api, ctv, campaignId, syncBody()), 'sync')) as {
    cohort: { id: string };
    attempt: { id: string };
  };
  await waitForCohort(api, ctv, cohort.id, (c) => c.attempts.every((a) => !['queued', 'in-progress'].includes(a.status)));

  const creative = await makeCreative(api, ctv, 'ctv');
  const { study } = (await created(await post(api, ctv, '/api/v1/brand-lift-studies', { name: 'Lift', campaignId }), 'study')) as {
    study: { id: string };
  };
  const { persona } = (await created(
    await post(api, ctv, '/api/v1/personas/extract', { nlBrief: 'Sports fans in Leeds aged 25 to 40' }),
    'persona',
  )) as { persona: { id: string } };
  const notify = {
    name: 'Tell us when the campaign falls behind',
    campaignId,
    condition: { subject: 'campaign', metric: 'pacing-percent', operator: 'below', value: 80, forDays: 1 },
    action: { kind: 'notify' },
    guardrails: { maxMovedPerDayMinor: 0, maxMovedPerFlightMinor: 0, minLineBudgetMinor: 0, cooldownDays: 1 },
  };
  const { rule } = (await created(await post(api, ctv, '/api/v1/rules', notify), 'rule')) as { rule: { id: string } };
  const { session } = (await created(
    await post(api, ctv, '/api/v1/buyer/sessions', { workflow: 'campaign_review', context: { campaignId } }),
    'session',
  )) as { session: { id: string } };
  const prepared = (await created(
    await post(api, ctv, '/api/v1/agent/actions/prepare', {
      name: 'creative.submit',
      parameters: { creativeId: creative.id, adapterKey: 'sandbox-ctv' },
      budgetMinor: 0,
      currency: 'GBP',
    }),
    'prepare',
  )) as { approvalId: string; runId: string; actionDigest: string };
  const { executeStep } = (await created(
    await post(api, ctv, `/api/v1/agent/approvals/${prepared.approvalId}/approve`, { expectedActionDigest: prepared.actionDigest }),
    'approve',
  )) as { executeStep: { id: string } };
  await workers.close();
  digest = prepared.actionDigest;
  // Measurement results of the CTV campaign, as prove-it and the optimizer would have stored them.
  const evidenceId = crypto.randomUUID();
  await env.db('lift_evidence').insert({
    id: evidenceId,
    advertiser_id: 'org-a',
    campaign_id: campaignId,
    method: 'time-based-regression',
    design: '{}',
    result: '{}',
    created_by: 'ctv-buyer',
  });
  const optimizationId = crypto.randomUUID();
  await env.db('optimizations').insert({
    id: optimizationId,
    advertiser_id: 'org-a',
    campaign_id: campaignId,
    kind: 'shift-budget',
    subject: crypto.randomUUID(),
    basis_plan_version: planVersion,
    reason: 'A rejected line',
    figures: '{}',
    change: '{}',
  });

  Object.assign(fixture, {
    campaign: campaignId,
    plan: planId,
    booking: booking.id,
    creative: creative.id,
    cohort: cohort.id,
    study: study.id,
    persona: persona.id,
    'buyer-session': session.id,
    'agent-approval': prepared.approvalId,
    rule: rule.id,
    'agent-step': executeStep.id,
    'agent-run': prepared.runId,
    'lift-evidence': evidenceId,
    optimization: optimizationId,
  });
  Object.assign(paramValue, {
    bookingId: booking.id,
    lineId: booking.lines[0]!.id,
    campaignId,
    cohortId: cohort.id,
    attemptId: attempt.id,
    studyId: study.id,
    advertiserId: 'org-a',
    agentClientId: 'planner-bot',
    browserJobId: randomUUID(),
  });

  const doc = await json<{
    paths: Record<string, Record<string, { operationId: string; security: unknown[]; 'x-flightdeck-scope'?: Scope }>>;
  }>(await api.fetch('/api/v1/openapi.json', { token: ctv }));
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, op]) => op.security.length > 0)
      .map(([method, op]) => ({ method, path, operationId: op.operationId, scope: op['x-flightdeck-scope'] })),
  );
}, 120_000);
afterAll(() => env.close());

/** Every row of every table, so that "nothing changed" covers tables nobody thought of. */
async function snapshot(): Promise<Record<string, string>> {
  const tables = (await env
    .db('pg_tables')
    .where({ schemaname: 'public' })
    .whereNot('tablename', 'like', 'knex_%')
    .pluck('tablename')) as string[];
  const out: Record<string, string> = {};
  for (const t of tables.sort()) {
    const { rows } = await env.db.raw(`select coalesce(md5(string_agg(x::text, '|' order by x::text)), '') as h from "${t}" x`);
    out[t] = rows[0].h;
  }
  return out;
}

const call = (token: string, method: string, path: string, body?: unknown) =>
  api.fetch(path, {
    method: method.toUpperCase(),
    token,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });

const fill = (path: string, values: Record<string, string>) =>
  path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
    const v = values[name];
    if (!v) throw new Error(`no value for path parameter ${name} in ${path}`);
    return v;
  });

const problemOf = async (res: Response) => ({ ...(await json(res)), requestId: null });

/** Operations that create something: the CTV request a DOOH caller sends, and the refusal the spec asks for. */
const REQUEST_CASES: Record<string, Array<{ body: () => unknown; status: 403 | 404 }>> = {
  createCampaign: [
    {
      status: 403,
      body: () => ({
        name: 'CTV',
        clientName: 'Acme',
        startDate: '2099-03-01',
        endDate: '2099-03-31',
        budgetMinor: 1000,
        maximumCommitmentMinor: 1000,
        channels: ['ctv'],
      }),
    },
  ],
  createCreative: [
    { status: 403, body: () => ({ name: 'x', channel: 'ctv', format: 'video-30s', assetUrl: '/files/assets/none', copyText: 'x' }) },
    {
      status: 404,
      body: () => ({
        name: 'x',
        channel: 'dooh',
        format: 'still',
        assetUrl: '/files/assets/none',
        copyText: 'x',
        campaignId: fixture.campaign,
      }),
    },
  ],
  prepareAgentAction: [
    {
      status: 404,
      body: () => ({ name: 'campaign.launch', parameters: { campaignId: fixture.campaign }, budgetMinor: 10_000, currency: 'GBP' }),
    },
    {
      status: 404,
      body: () => ({
        name: 'creative.submit',
        parameters: { creativeId: fixture.creative, adapterKey: 'sandbox-ctv' },
        budgetMinor: 0,
        currency: 'GBP',
      }),
    },
  ],
  createBuyerSession: [
    { status: 404, body: () => ({ workflow: 'campaign_review', context: { campaignId: fixture.campaign } }) },
    { status: 404, body: () => ({ workflow: 'brief_to_plan', context: { personaId: fixture.persona } }) },
    { status: 404, body: () => ({ workflow: 'creative_direction', context: { creativeId: fixture.creative } }) },
    { status: 404, body: () => ({ workflow: 'campaign_review', context: { planId: fixture.plan } }) },
  ],
  createStudy: [{ status: 404, body: () => ({ name: 'Lift', campaignId: fixture.campaign }) }],
  createRule: [
    {
      status: 404,
      body: () => ({
        name: 'On a CTV campaign',
        campaignId: fixture.campaign,
        condition: { subject: 'campaign', metric: 'pacing-percent', operator: 'below', value: 80, forDays: 1 },
        action: { kind: 'notify' },
        guardrails: { maxMovedPerDayMinor: 0, maxMovedPerFlightMinor: 0, minLineBudgetMinor: 0, cooldownDays: 1 },
      }),
    },
  ],
};

/** Well-formed bodies for some scoped mutations, so that the 404 is about scope and not the body (the rest send {}). */
const VALID_BODIES: Record<string, () => unknown> = {
  abandonAgentAction: () => ({ expectedActionDigest: digest, note: 'not ours' }),
  approveAgentAction: () => ({ expectedActionDigest: digest }),
  resolveAgentExecution: () => ({ expectedActionDigest: digest, outcome: 'applied', note: 'not ours' }),
  appendBuyerSessionMessage: () => ({ revision: 1, role: 'user', message: 'hello', requestId: randomUUID() }),
  recordAgentEvidence: () => ({ kind: 'note', source: 'dooh', content: {} }),
  reviseCreative: () => ({ headline: 'Changed' }),
  setCreativeDestination: () => ({ destinationUrl: 'https://acme.example/changed' }),
  quoteStudy: () => ({ sampleSize: 1000 }),
};
let digest = '';

/** Lists: the CTV resource they must not hold for a DOOH caller (and do hold for the CTV caller). */
const FILTERED_CASES: Record<string, { key: string; id: () => string }> = {
  listCampaigns: { key: 'campaigns', id: () => fixture.campaign! },
  listPersonas: { key: 'personas', id: () => fixture.persona! },
  listRules: { key: 'rules', id: () => fixture.rule! },
};

/** Operations that concern no channel: the caller's own context, contracts, mandates, and creations that name nothing. */
const CALLER_OPERATIONS = [
  'getAuthContext',
  'getStaffSession',
  'listAgentActions',
  'listAgentMandates',
  'putAgentMandate',
  'uploadAsset',
  'extractPersona',
  // Workspace-wide money: funding requests and the billing summary concern no channel.
  'createTopupRequest',
  'inspectTopupRequest',
  'reconcileTopupRequest',
  'billingSummary',
  // The workspace's spend settings concern no channel.
  'getWorkspaceSettings',
  'updateWorkspaceSettings',
  // Workspace figures; the campaigns among them are read through the scoped campaign lookup.
  'workspaceOverview',
  'listMarkets',
  // Webhooks: the catalogue concerns nothing; subscriptions carry every channel's events, so only
  // a product covering every channel may manage them (403 channel_not_entitled for the others).
  'listWebhookEventTypes',
  'createWebhookSubscription',
  'listWebhookSubscriptions',
  'getWebhookSubscription',
  'updateWebhookSubscription',
  'deleteWebhookSubscription',
  'rotateWebhookSecret',
  'listWebhookDeliveries',
  'redeliverWebhook',
  // The workspace's sandbox test clock: one per workspace, whatever the channel.
  'getSandboxClock',
  'advanceSandboxClock',
  // The supplier catalogue is the deployment's, not a workspace resource.
  'listAdapters',
  // A seller's products: the channel asked for is checked against the caller's product (404 outside it).
  'listSellerProducts',
  // Reconciliation spans every line a seller ran, whatever its channel: only a product covering every
  // channel reads or changes it (403 channel_not_entitled for the others, as for webhooks).
  'getSellerStatement',
  'importInvoice',
  'listInvoices',
  'getInvoice',
  'resolveInvoiceDispute',
  'listMakegoods',
  'listDeliveryDiscrepancies',
  'acknowledgeDeliveryDiscrepancy',
];

describe('the OpenAPI document declares product scope for every private operation', () => {
  test('each bearer operation says how it keeps to the scope, and the declaration is one this suite can prove', () => {
    expect(operations.length).toBeGreaterThan(30);
    const undeclared = operations.filter((o) => !o.scope).map((o) => o.operationId);
    expect(undeclared).toEqual([]);
    const unproven = operations
      .filter(
        (o) =>
          (o.scope === 'request' && !REQUEST_CASES[o.operationId]) ||
          (o.scope === 'filtered' && !FILTERED_CASES[o.operationId]) ||
          (o.scope === 'caller' && !CALLER_OPERATIONS.includes(o.operationId)) ||
          (typeof o.scope === 'object' && !fixture[o.scope.resource]),
      )
      .map((o) => o.operationId);
    expect(unproven).toEqual([]);
  });

  test('the CTV fixtures are real: the CTV caller reads each of them', async () => {
    for (const [kind, path] of [
      ['campaign', '/api/v1/campaigns/'],
      ['plan', '/api/v1/plans/'],
      ['booking', '/api/v1/bookings/'],
      ['creative', '/api/v1/creatives/'],
      ['cohort', '/api/v1/identity/cohorts/'],
      ['study', '/api/v1/brand-lift-studies/'],
      ['persona', '/api/v1/personas/'],
      ['buyer-session', '/api/v1/buyer/sessions/'],
      ['agent-run', '/api/v1/agent/runs/'],
    ] as const) {
      expect([kind, (await api.fetch(`${path}${fixture[kind]}`, { token: ctv })).status]).toEqual([kind, 200]);
    }
    const { run } = await json<{ run: { approvals: Array<{ id: string }>; steps: Array<{ id: string }> } }>(
      await api.fetch(`/api/v1/agent/runs/${fixture['agent-run']}`, { token: ctv }),
    );
    expect(run.approvals.map((a) => a.id)).toContain(fixture['agent-approval']);
    expect(run.steps.map((s) => s.id)).toContain(fixture['agent-step']);
  });
});

describe('a DOOH-only caller against the CTV resources of its own workspace', () => {
  let notFoundBody: Record<string, unknown>;
  let before: Record<string, string>;
  beforeAll(async () => {
    // The DOOH caller's first request may provision things of its own: make it before the snapshot.
    notFoundBody = await problemOf(await api.fetch(`/api/v1/campaigns/${randomUUID()}`, { token: dooh }));
    before = await snapshot();
  });

  test('every operation on a CTV resource answers the same 404 as an unknown id, whatever the body', async () => {
    const answers: Array<[string, number, boolean]> = [];
    for (const op of operations.filter((o) => typeof o.scope === 'object')) {
      const scope = op.scope as { resource: string; param: string };
      const path = fill(op.path, { ...paramValue, [scope.param]: fixture[scope.resource]! });
      const res = await call(dooh, op.method, path, op.method === 'get' ? undefined : (VALID_BODIES[op.operationId]?.() ?? {}));
      answers.push([
        op.operationId,
        res.status,
        res.status === 404 && JSON.stringify(await problemOf(res)) === JSON.stringify(notFoundBody),
      ]);
    }
    expect(answers.length).toBeGreaterThan(25);
    expect(answers.filter(([, status, same]) => status !== 404 || !same)).toEqual([]);
  });

  test('staff operations are not found for a caller who is not staff', async () => {
    for (const op of operations.filter((o) => o.scope === 'staff')) {
      const res = await call(dooh, op.method, fill(op.path, paramValue), op.method === 'get' ? undefined : {});
      expect([op.operationId, res.status]).toEqual([op.operationId, 404]);
    }
  });

  test('creating on CTV is refused with 403, and naming a CTV resource in a request is 404', async () => {
    for (const op of operations.filter((o) => o.scope === 'request')) {
      for (const c of REQUEST_CASES[op.operationId] ?? []) {
        const res = await call(dooh, op.method, op.path, c.body());
        const problem = await json<{ code: string }>(res);
        expect([op.operationId, res.status, problem.code]).toEqual([
          op.operationId,
          c.status,
          c.status === 403 ? 'channel_not_entitled' : 'not_found',
        ]);
      }
    }
  });

  test('lists hold no CTV resource for the DOOH caller, and do for the CTV caller', async () => {
    for (const op of operations.filter((o) => o.scope === 'filtered')) {
      const c = FILTERED_CASES[op.operationId]!;
      const ids = async (token: string) =>
        ((await json<Record<string, Array<{ id: string }>>>(await call(token, op.method, op.path)))[c.key] ?? []).map((r) => r.id);
      expect(await ids(dooh)).not.toContain(c.id());
      expect(await ids(ctv)).toContain(c.id());
    }
  });

  test('after all of the above, not one row of any table changed', async () => {
    expect(await snapshot()).toEqual(before);
  });
});
