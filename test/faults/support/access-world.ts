import { randomBytes, randomUUID } from 'node:crypto';
import type { TestApi, TestEnv } from '../../support/api';
import { allDefinite, approve, draftCampaign, launchPlan, post, waitForBooking } from '../../support/bookings';
import { fundWallet } from '../../support/wallet';
import { panelRows, syntheticPanel } from '../../measurement/synthetic';
import { upload } from '../../support/creatives';
import { until } from '../../support/wait';
import { cleanEnv, runScript } from '../../support/processes';
import { requiredQueues } from '../../../shared/queues/names';
import { recordEvent } from '../../../shared/events/record';
import type { Operation } from './input-openapi';
import type { Realistic } from './input-arbitraries';
import { deliver, finalMarch, invoiceBody, postInvoice } from '../../reconciliation/support';
import { day } from '../../delivery/support';

/**
 * A realistic workspace for the fault tests, built through the API as its users would: a
 * confirmed CTV campaign with a synced audience cohort, a workflow (manual) booking for staff,
 * a creative, a persona, a buyer session, a prepared and approved agent action, a funded
 * study, a top-up request, imported outcomes with their lift evidence, an open optimization,
 * and staff members managed with `npm run admin`. Everything belongs to `org-a` and
 * to CTV, so that other tenants and the DOOH-only product can be pointed at it.
 */
export const ORG = 'org-a';
export const HUMAN_PERMISSIONS = ['agent:approve', 'operator:reconcile', 'plan:approve', 'campaign:launch'];
export const AGENT_CLIENT = 'planner-bot';
const WORKFLOW_QUEUES = ['supplier.manual', 'supplier.computer-use'];

export interface World {
  ids: Record<string, string>;
  /** The buyer (human, both permissions) who owns everything. */
  human: string;
  /** Staff user assigned to org-a. */
  staff: string;
  /** Realistic body values by property name, for bodies that get past validation. */
  realistic: Realistic;
}

/** Runs `npm run admin -- …` against the file's database, as an operator would. */
export async function admin(env: TestEnv, ...args: string[]): Promise<string> {
  const done = await runScript('bin/admin.ts', args, cleanEnv({ DATABASE_URL: env.database.url, DATA_DIR: env.dataDir }), 60_000);
  if (done.code !== 0) throw new Error(`admin ${args.join(' ')} failed (${done.code}): ${done.stderr}`);
  return done.stdout;
}

async function ok<T>(res: Response, what: string, statuses = [200, 201, 202]): Promise<T> {
  if (!statuses.includes(res.status)) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Starts the workers; unless `all`, workflow queues are left out, so workflow lines stay queued until staff act. */
export const startWorkers = (env: TestEnv, all = false) =>
  env.workers({
    WORKER_QUEUES: requiredQueues()
      .filter((q) => all || !WORKFLOW_QUEUES.includes(q))
      .join(','),
    OUTBOX_RELAY_INTERVAL_MS: '50',
  });

export async function seedWorld(env: TestEnv, api: TestApi): Promise<World> {
  const human = await env.issuer.token({ org: ORG, user: `${ORG}-lead`, permissions: HUMAN_PERMISSIONS });
  const agent = await env.issuer.token({ org: ORG, user: `${ORG}-lead`, agent: AGENT_CLIENT });
  const ctvOnly = await env.issuer.token({ org: ORG, user: `${ORG}-lead`, product: 'flightdeck-ctv', agent: AGENT_CLIENT });
  const ids: Record<string, string> = {};

  await ok(
    await post(
      api,
      human,
      `/api/v1/agent/mandates/${AGENT_CLIENT}`,
      {
        allowedActions: ['campaign.launch', 'audience.sync', 'creative.submit', 'study.draft'],
        budgetCeilingMinor: 10_000_000,
        currency: 'GBP',
      },
      'PUT',
    ),
    'mandate',
  );

  // A confirmed CTV booking and the identity cohort synced from its exposure.
  const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], ORG);
  const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.status === 'confirmed');
  Object.assign(ids, { campaign: launched.campaignId, plan: launched.planId, booking: booking.id, line: booking.lines[0]!.id });
  const sync = await ok<{ cohort: { id: string }; attempt: { id: string } }>(
    await post(api, launched.token, `/api/v1/campaigns/${launched.campaignId}/sync-audience`, {
      exposedOn: ['ctv'],
      channel: 'ctv',
      purpose: 'inclusion',
      adapterKey: 'sandbox-ctv',
      executionMode: 'sandbox',
    }),
    'sync',
  );
  Object.assign(ids, { cohort: sync.cohort.id, attempt: sync.attempt.id });
  await until('the cohort to settle', async () => {
    const res = await api.fetch(`/api/v1/identity/cohorts/${sync.cohort.id}`, { token: human });
    return ((await res.json()) as { cohort: { state: string } }).cohort.state !== 'syncing';
  });

  // A workflow booking: its line waits for staff.
  const workflow = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }], ORG);
  Object.assign(ids, {
    workflowCampaign: workflow.campaignId,
    workflowBooking: workflow.booking.id,
    workflowLine: workflow.booking.lines[0]!.id,
    snapshotDigest: workflow.booking.snapshotDigest,
    channelCampaignId: workflow.booking.lines[0]!.channelCampaignId,
  });

  const asset = await upload(api, human, 'video/mp4');
  const { creative } = await ok<{ creative: { id: string } }>(
    await post(api, human, '/api/v1/creatives', {
      name: 'CTV spot',
      channel: 'ctv',
      format: 'video-30s',
      assetUrl: asset.url,
      copyText: 'Refreshingly simple.',
    }),
    'creative',
  );
  Object.assign(ids, { creative: creative.id, assetName: asset.name, assetUrl: asset.url });

  const { persona } = await ok<{ persona: { id: string } }>(
    await post(api, human, '/api/v1/personas/extract', { nlBrief: 'Coffee lovers in London aged 25 to 34' }),
    'persona',
  );
  ids.persona = persona.id;

  // The session carries the CTV-only product's scope.
  const { session } = await ok<{ session: { id: string } }>(
    await post(api, ctvOnly, '/api/v1/buyer/sessions', { workflow: 'campaign_review', context: { campaignId: launched.campaignId } }),
    'session',
  );
  ids.session = session.id;

  // An agent action on an approved, unlaunched CTV campaign: prepared by the agent, approved by the human.
  const pending = await draftCampaign(api, human, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 12_000 }]);
  await approve(api, human, pending.campaignId, pending.planVersion);
  const prepared = await ok<{ approvalId: string; runId: string; actionDigest: string; commitment: { budgetMinor: number } }>(
    await post(api, agent, '/api/v1/agent/actions/prepare', {
      name: 'campaign.launch',
      parameters: { campaignId: pending.campaignId },
      budgetMinor: 12_000,
      currency: 'GBP',
    }),
    'prepare',
  );
  const approved = await ok<{ executeStep: { id: string } }>(
    await post(api, human, `/api/v1/agent/approvals/${prepared.approvalId}/approve`, { expectedActionDigest: prepared.actionDigest }),
    'approve',
  );
  Object.assign(ids, {
    pendingCampaign: pending.campaignId,
    approval: prepared.approvalId,
    run: prepared.runId,
    step: approved.executeStep.id,
    actionDigest: prepared.actionDigest,
  });

  // A funded study of the CTV campaign (wallets are funded by signed settlement; an operator's adjustment stands in).
  await fundWallet(env, ORG, 10_000_000);
  const { study } = await ok<{ study: { id: string } }>(
    await post(api, human, '/api/v1/brand-lift-studies', { name: 'Awareness lift', campaignId: launched.campaignId }),
    'study',
  );
  const { quote } = await ok<{ quote: { id: string } }>(
    await post(api, human, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 1000 }),
    'quote',
  );
  const { approval } = await ok<{ approval: { id: string } }>(
    await post(api, human, `/api/v1/brand-lift-studies/${study.id}/approvals`, { quoteId: quote.id }),
    'study approval',
  );
  Object.assign(ids, { study: study.id, quote: quote.id, studyApproval: approval.id });

  // A top-up request waiting for payment at the provider.
  const { request: topup } = await ok<{ request: { id: string; sessionId: string } }>(
    await api.fetch('/api/v1/billing/topup/requests', {
      method: 'POST',
      token: human,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ amountMinor: 50_000, currency: 'GBP' }),
    }),
    'top-up request',
  );
  ids.topupRequest = topup.id;

  // Daily outcomes of the CTV campaign, powered enough for stored lift evidence: a geo-lift design
  // registered on the days before exposure, evaluated once the exposure weeks are in.
  const panel = syntheticPanel({ seed: 7, lift: 0.2 });
  const importOutcomes = async (rows: unknown[]) =>
    ok(
      await api.fetch(`/api/v1/campaigns/${launched.campaignId}/outcomes`, {
        method: 'POST',
        token: human,
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({ rows }),
      }),
      'outcomes',
    );
  await importOutcomes(panelRows(panel).filter((r) => r.date < panel.exposureStart));
  await ok(
    await post(api, human, `/api/v1/campaigns/${launched.campaignId}/geo-lift-designs`, {
      testMarket: 'london',
      exposureStart: panel.exposureStart,
      exposureEnd: panel.exposureEnd,
      expectedLiftPct: 10,
    }),
    'geo-lift design',
  );
  await importOutcomes(panelRows(panel, 'conversions', panel.exposureStart));
  const { evidence } = await ok<{ evidence: { id: string } }>(
    await post(api, human, `/api/v1/campaigns/${launched.campaignId}/prove-it`, {
      exposureStart: panel.exposureStart,
      expectedLiftPct: 10,
    }),
    'prove-it',
  );
  ids.liftEvidence = evidence.id;

  // An open optimization: the sandbox rejects a DOOH line whose budget ends in 91, and its budget is suggested for the CTV line.
  const mixed = await launchPlan(
    env,
    api,
    [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 5_091 },
    ],
    ORG,
  );
  await waitForBooking(api, mixed.token, mixed.booking.id, allDefinite);
  const { optimizations } = await ok<{ optimizations: Array<{ id: string }> }>(
    await api.fetch(`/api/v1/campaigns/${mixed.campaignId}/optimizations`, { token: human }),
    'optimizations',
  );
  if (optimizations.length !== 1) throw new Error(`expected one optimization, got ${JSON.stringify(optimizations)}`);
  ids.optimization = optimizations[0]!.id;

  // A notify-only rule on the CTV campaign.
  const { rule } = await ok<{ rule: { id: string } }>(
    await post(api, human, '/api/v1/rules', {
      name: 'Tell us when the campaign falls behind',
      campaignId: ids.campaign,
      condition: { subject: 'campaign', metric: 'pacing-percent', operator: 'below', value: 80, forDays: 1 },
      action: { kind: 'notify' },
      guardrails: { maxMovedPerDayMinor: 0, maxMovedPerFlightMinor: 0, minLineBudgetMinor: 0, cooldownDays: 1 },
    }),
    'rule',
  );
  ids.rule = rule.id;

  const context = await ok<{ workspace: { pixelKey: string } }>(await api.fetch('/api/v1/auth/context', { token: human }), 'context');
  ids.pixelKey = context.workspace.pixelKey;

  // A webhook subscription with one delivery, paused so that no send changes its record meanwhile.
  const hook = await ok<{ subscription: { id: string } }>(
    await post(api, human, '/api/v1/webhooks/subscriptions', {
      url: 'https://hooks.example.com/fault-suite',
      eventTypes: ['funding.credited'],
    }),
    'webhook subscription',
  );
  ids.webhookSubscription = hook.subscription.id;
  await env.db.transaction(async (trx) => {
    await recordEvent(trx, { workspaceId: ORG, type: 'funding.credited', subjectId: topup.id, subjectVersion: 1, body: {} });
    await trx('webhook_subscriptions').where({ id: ids.webhookSubscription }).update({ enabled: false });
  });
  ids.webhookDelivery = (await env.db('webhook_deliveries').where({ subscription_id: ids.webhookSubscription }).first('id')).id;

  await admin(env, 'staff', 'grant', '--user', 'staff-1');
  await admin(env, 'staff', 'assign', '--user', 'staff-1', '--org', ORG);
  const staff = await env.issuer.token({ org: 'staff-org', user: 'staff-1' });
  await api.fetch('/api/v1/auth/context', { token: staff });

  // A browser job staff asked for on the workflow line, as the API records it (no browser runs here).
  ids.browserJob = randomUUID();
  await env.db('browser_jobs').insert({
    id: ids.browserJob,
    advertiser_id: ORG,
    campaign_id: ids.workflowCampaign,
    booking_id: ids.workflowBooking,
    line_id: ids.workflowLine,
    purpose: 'observe',
    supplier_url: 'https://example.com/',
    requested_by: 'staff-1',
    snapshot_digest: ids.snapshotDigest,
    status: 'failed',
    failure_code: 'browser_unavailable',
    failure_reason: 'No browser in the fault world.',
  });

  // A final March on a live seller: a final day restated (an open discrepancy) and an invoice with a disputed line.
  const march = await finalMarch(env, ORG, [50_000], [[10_000, 10_000]]);
  await deliver(env, { lineId: march.lineIds[0]!, bookingId: march.bookingId, advertiserId: ORG }, [day('2099-03-01', 9_000, 90_000)]);
  ids.discrepancy = (await env.db('delivery_discrepancies').where({ advertiser_id: ORG }).first('id')).id;
  const { invoice } = await ok<{ invoice: { id: string } }>(
    await postInvoice(api, human, invoiceBody([{ lineId: march.lineIds[0], impressions: 300_000, amountMinor: 30_000 }])),
    'invoice',
  );
  ids.invoice = invoice.id;
  ids.invoiceLine = (await env.db('invoice_lines').where({ invoice_id: invoice.id }).first('id')).id;

  const realistic: Realistic = {
    campaignId: ids.campaign,
    planId: ids.plan,
    personaId: ids.persona,
    creativeId: ids.creative,
    quoteId: ids.quote,
    approvalId: ids.studyApproval,
    stepId: ids.step,
    expectedActionDigest: ids.actionDigest,
    expectedSnapshotDigest: ids.snapshotDigest,
    channelCampaignId: ids.channelCampaignId,
    assetUrl: ids.assetUrl,
    adapterKey: 'sandbox-ctv',
    channel: 'ctv',
    channels: ['ctv'],
    exposedOn: ['ctv'],
    notExposedOn: [],
    executionMode: 'sandbox',
    // Names are free text everywhere but in prepare, where they name the action.
    name: 'campaign.launch',
    clientName: 'Acme Drinks',
    startDate: '2099-03-01',
    endDate: '2099-03-31',
    budgetMinor: 12_000,
    maximumCommitmentMinor: 12_000,
    currency: 'GBP',
    lines: [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 12_000 }],
    parameters: { campaignId: ids.pendingCampaign },
    expectedVersion: 1,
    expectedRevision: 1,
    expectedConnectionRevision: null,
    revision: 1,
    evidence: 'The supplier desk confirmed by phone at 10:02.',
    evidenceReference: 'ticket:fault-suite',
    providerReference: 'IO-1',
    note: 'Checked with the supplier.',
    nlBrief: 'Coffee lovers in London aged 25 to 34',
    supplierUrl: 'https://example.com/',
    readOnlyConfirmed: true,
    sampleSize: 1000,
    allowedActions: ['campaign.launch'],
    budgetCeilingMinor: 100_000,
    format: 'video-30s',
    copyText: 'Refreshingly simple.',
    kind: 'observation',
    source: 'fault-suite',
    content: { seen: true },
    context: { campaignId: ids.campaign },
    requestId: randomUUID(),
    amountMinor: 5_000,
    sessionId: topup.sessionId,
    testMarket: 'london',
    exposureStart: panel.exposureStart,
    expectedLiftPct: 10,
    // A rule: notify when the campaign falls behind.
    condition: { subject: 'campaign', metric: 'pacing-percent', operator: 'below', value: 80, forDays: 1 },
    action: { kind: 'notify' },
    guardrails: { maxMovedPerDayMinor: 0, maxMovedPerFlightMinor: 0, minLineBudgetMinor: 0, cooldownDays: 1 },
    mediaType: 'text/plain',
    contentBase64: Buffer.from('Processing terms: data is held for twelve months.').toString('base64'),
    retainUntil: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  };
  return { ids, human, staff, realistic };
}

/** What a path parameter names, read from the segment before it: `campaigns/{id}`. */
export interface PathTarget {
  value: string;
  /** A tenant's resource: another tenant must get 404. */
  tenant: boolean;
  /** Belongs to the CTV channel: a DOOH-only caller must get 404. */
  ctv: boolean;
  /** A well-formed id that never existed, when a UUID is not one. */
  never?: () => string;
}

export function pathTargets(world: World, op: Operation): Record<string, PathTarget> {
  const { ids } = world;
  const table: Record<string, PathTarget> = {
    'campaigns/{id}': { value: ids.campaign!, tenant: true, ctv: true },
    'plans/{id}': { value: ids.plan!, tenant: true, ctv: true },
    'bookings/{id}': { value: ids.booking!, tenant: true, ctv: true },
    'bookings/{bookingId}': { value: ids.workflowBooking!, tenant: true, ctv: true },
    'lines/{lineId}': { value: ids.workflowLine!, tenant: true, ctv: true },
    'approvals/{id}': { value: ids.approval!, tenant: true, ctv: true },
    'steps/{id}': { value: ids.step!, tenant: true, ctv: true },
    'runs/{id}': { value: ids.run!, tenant: true, ctv: true },
    'mandates/{agentClientId}': { value: AGENT_CLIENT, tenant: false, ctv: false },
    'brand-lift-studies/{studyId}': { value: ids.study!, tenant: true, ctv: true },
    'personas/{id}': { value: ids.persona!, tenant: true, ctv: false },
    'sessions/{id}': { value: ids.session!, tenant: true, ctv: true },
    'creatives/{id}': { value: ids.creative!, tenant: true, ctv: true },
    'cohorts/{cohortId}': { value: ids.cohort!, tenant: true, ctv: true },
    'attempts/{attemptId}': { value: ids.attempt!, tenant: true, ctv: true },
    't/{pixelKey}': { value: ids.pixelKey!, tenant: false, ctv: false },
    'assets/{name}': { value: ids.assetName!, tenant: false, ctv: false },
    'clients/{advertiserId}': { value: ORG, tenant: true, ctv: false },
    'campaigns/{campaignId}': { value: ids.workflowCampaign!, tenant: true, ctv: true },
    'requests/{requestId}': { value: ids.topupRequest!, tenant: true, ctv: false, never: () => `wtr-${randomBytes(32).toString('hex')}` },
    'lift-evidence/{id}': { value: ids.liftEvidence!, tenant: true, ctv: true },
    'optimizations/{id}': { value: ids.optimization!, tenant: true, ctv: true },
    'rules/{id}': { value: ids.rule!, tenant: true, ctv: true },
    'subscriptions/{id}': { value: ids.webhookSubscription!, tenant: true, ctv: false },
    'deliveries/{deliveryId}': { value: ids.webhookDelivery!, tenant: true, ctv: false },
    // The deployment's supplier catalogue: no tenant owns it. The fault world runs no AdCP seller, so
    // its products are asked of a key that is not one (404 for everyone let in).
    'browser-jobs/{browserJobId}': { value: ids.browserJob!, tenant: true, ctv: true },
    'statements/{seller}': { value: 'live-ctv', tenant: false, ctv: false },
    '{seller}/{period}': { value: '2099-03', tenant: false, ctv: false },
    // Reconciliation is a whole-workspace surface, like billing: a narrower product is refused (403) before any id is read.
    'invoices/{id}': { value: ids.invoice!, tenant: true, ctv: false },
    'discrepancies/{id}': { value: ids.discrepancy!, tenant: true, ctv: false },
    // An invoice's line is named under its invoice: the disputed line of the seeded invoice.
    'invoices/{id}/lines/{lineId}': { value: ids.invoiceLine!, tenant: true, ctv: false },
    'adapters/{key}': { value: 'sandbox-ctv', tenant: false, ctv: false },
  };
  const out: Record<string, PathTarget> = {};
  const segments = op.path.split('/');
  segments.forEach((seg, i) => {
    const m = /^\{(.+)\}$/.exec(seg);
    if (!m) return;
    const key = `${segments[i - 1]}/${seg}`;
    const target = table[segments.slice(i - 3, i + 1).join('/')] ?? table[key];
    if (!target) throw new Error(`The fault world has no resource for ${key} (${op.operationId}); seed one in access-world.ts.`);
    out[m[1]!] = target;
  });
  return out;
}
