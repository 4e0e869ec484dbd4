import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import type { RunningWorkers } from '../../workers/main';
import { beginAudienceSync } from '../../shared/audiences/sync-execution';
import { audienceSupplierFor } from '../../workers/adapters/audience-sandbox';
import { DIGEST, STEP, actors, prepare, type Prepared } from '../agent/support';
import { post } from '../support/bookings';
import {
  exposedCampaign,
  footprint,
  ledgerOf,
  readCohort,
  syncAudience,
  syncBody,
  waitForCohort,
  type AttemptBody,
  type CohortBody,
} from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

type Synced = { cohort: CohortBody; attempt: AttemptBody };
const problem = async (res: Response) => {
  const { requestId: _ignored, ...rest } = await json<{ requestId: string; code: string }>(res);
  return rest;
};

describe('sync in sandbox', () => {
  let workers: RunningWorkers;
  beforeAll(async () => {
    // Long enough that a loaded machine still sees the slow supplier's attempt in flight.
    workers = await env.workers({ SANDBOX_SLOW_MS: '5000' });
  });
  afterAll(() => workers.close());

  test('a cohort built from confirmed exposure is queued (202), then synced with a supplier reference; the supplier received it exactly once', async () => {
    const { campaignId, token } = await exposedCampaign(env, api, {
      lines: [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_005 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 20_000 },
        { channel: 'tv', adapterKey: 'sandbox-tv', budgetMinor: 5_000 },
      ],
    });
    const res = await syncAudience(api, token, campaignId, syncBody({ exposedOn: ['ctv', 'audio'], notExposedOn: ['tv'] }));
    expect(res.status).toBe(202);
    const { cohort, attempt } = await json<Synced>(res);
    // floor(10005/10) + floor(20000/10) − floor(5000/10)
    expect(cohort).toMatchObject({
      campaignId,
      advertiserId: 'org-a',
      estimatedSize: 2500,
      revision: 1,
      state: 'syncing',
      createdBy: 'org-a-buyer',
      definition: {
        exposedOn: ['ctv', 'audio'],
        notExposedOn: ['tv'],
        channel: 'ctv',
        purpose: 'inclusion',
        adapterKey: 'sandbox-ctv',
        executionMode: 'sandbox',
      },
    });
    expect(attempt).toMatchObject({ cohortId: cohort.id, revision: 1, status: 'queued', providerReference: null });
    expect(cohort.attempts).toEqual([attempt]);

    const done = await waitForCohort(api, token, cohort.id, (c) => c.state === 'synced');
    expect(done.revision).toBe(1);
    expect(done.attempts).toHaveLength(1);
    expect(done.attempts[0]).toMatchObject({ id: attempt.id, status: 'synced', providerReference: expect.stringMatching(/^sbx-aud-ctv-/) });
    expect(done.attempts[0]!.startedAt).not.toBeNull();
    const ledger = await ledgerOf(env, attempt.id);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ operation: 'audience-sync', adapter_key: 'sandbox-ctv', line_id: null, outcome: 'synced' });
    expect(ledger[0].provider_reference).toBe(done.attempts[0]!.providerReference);

    const listed = await json<{ cohorts: CohortBody[] }>(await api.fetch(`/api/v1/campaigns/${campaignId}/cohorts`, { token }));
    expect(listed.cohorts.map((c) => [c.id, c.state])).toEqual([[cohort.id, 'synced']]);
  });

  test('[sync-reject] in the campaign name: the supplier refuses, the attempt and cohort are rejected with its reasons', async () => {
    const { campaignId, token } = await exposedCampaign(env, api, { name: 'Summer [sync-reject]' });
    const { cohort } = await json<Synced>(await syncAudience(api, token, campaignId));
    const done = await waitForCohort(api, token, cohort.id, (c) => c.state !== 'syncing');
    expect(done.state).toBe('rejected');
    expect(done.attempts[0]).toMatchObject({ status: 'rejected', providerReference: null });
    expect(done.attempts[0]!.detail!.reasons).toEqual(expect.arrayContaining([expect.stringMatching(/refused/)]));
    expect(await ledgerOf(env, done.attempts[0]!.id)).toHaveLength(1);
  });

  test('[sync-unknown]: the supplier received it but the answer was lost, so the attempt needs resolution and is not sent again', async () => {
    const { campaignId, token } = await exposedCampaign(env, api, { name: 'Autumn [sync-unknown]' });
    const { cohort } = await json<Synced>(await syncAudience(api, token, campaignId));
    const done = await waitForCohort(api, token, cohort.id, (c) => c.state !== 'syncing');
    expect(done.state).toBe('needs-resolution');
    expect(done.attempts[0]).toMatchObject({ status: 'needs-resolution', providerReference: null, resolution: null });
    expect(done.attempts[0]!.detail).toMatchObject({ reason: expect.stringMatching(/answer was lost/) });
    await new Promise((r) => setTimeout(r, 300));
    expect(await ledgerOf(env, done.attempts[0]!.id)).toHaveLength(1);
  });

  test('[sync-slow]: the attempt is committed in flight before the supplier answers, then synced', async () => {
    const { campaignId, token } = await exposedCampaign(env, api, { name: 'Winter [sync-slow]' });
    const { cohort } = await json<Synced>(await syncAudience(api, token, campaignId));
    const during = await waitForCohort(api, token, cohort.id, (c) => c.attempts[0]!.status === 'in-flight');
    expect(during.state).toBe('syncing');
    // The supplier hears of it just after the attempt is committed, and is still thinking.
    for (let i = 0; i < 50 && (await ledgerOf(env, cohort.attempts[0]!.id)).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await ledgerOf(env, cohort.attempts[0]!.id)).toHaveLength(1);
    expect((await waitForCohort(api, token, cohort.id, () => true)).state).toBe('syncing');
    const done = await waitForCohort(api, token, cohort.id, (c) => c.state !== 'syncing');
    expect(done.attempts[0]!.status).toBe('synced');
  });

  test('live: refused 422 without approved supplier access; with it, the worker refuses before sending anything', async () => {
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-live' });
    const body = syncBody({ adapterKey: 'live-ctv', executionMode: 'live' });
    const before = await footprint(env);
    const refused = await syncAudience(api, token, campaignId, body);
    expect(refused.status).toBe(422);
    expect((await json(refused)).code).toBe('supplier_access_required');
    expect(await footprint(env)).toEqual(before);

    await env.db('supplier_credentials').insert({
      adapter_key: 'live-ctv',
      advertiser_id: 'org-live',
      secret_ref: 'vault:live-ctv',
      approved_at: new Date(),
    });
    const res = await syncAudience(api, token, campaignId, body);
    expect(res.status).toBe(202);
    const { cohort } = await json<Synced>(res);
    const done = await waitForCohort(api, token, cohort.id, (c) => c.state !== 'syncing');
    expect(done.state).toBe('rejected');
    expect(done.attempts[0]).toMatchObject({ status: 'rejected', startedAt: null });
    expect(done.attempts[0]!.detail!.reasons).toEqual([expect.stringMatching(/nothing was sent/)]);
    expect(await ledgerOf(env, cohort.attempts[0]!.id)).toHaveLength(0);
  });

  test('a delegated agent: prepare (0 GBP) → human approval → execute with the bound headers → 202; without them → 403', async () => {
    const a = await actors(env, api, 'org-agent');
    const { campaignId } = await exposedCampaign(env, api, { org: 'org-agent' });
    const body = syncBody({ purpose: 'suppression' });
    const prepared = await prepare(api, a.agent, 'audience.sync', { campaignId, ...body }, 0, 'GBP');
    expect(prepared.status).toBe(201);
    const p = await json<Prepared>(prepared);
    expect(p.commitment).toMatchObject({ budgetMinor: 0, currency: 'GBP' });
    const approved = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
    expect(approved.status).toBe(200);
    const { executeStep } = await json<{ executeStep: { id: string } }>(approved);

    const execute = (headers: Record<string, string>) =>
      api.fetch(`/api/v1/campaigns/${campaignId}/sync-audience`, {
        method: 'POST',
        token: a.agent,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const before = await footprint(env);
    const unbound = await execute({});
    expect(unbound.status).toBe(403);
    expect((await json(unbound)).code).toBe('execution_binding_required');
    expect(await footprint(env)).toEqual(before);

    const bound = await execute({ [STEP]: executeStep.id, [DIGEST]: p.actionDigest });
    expect(bound.status).toBe(202);
    const { cohort } = await json<Synced>(bound);
    expect(cohort.createdBy).toBe('org-agent-lead|agent:planner-bot');
    expect(cohort.definition).toMatchObject({ purpose: 'suppression', notExposedOn: [] });
    await waitForCohort(api, a.agent, cohort.id, (c) => c.state === 'synced');
  });
});

describe('unknown outcomes are never re-sent', () => {
  test('a supplier that does not answer within SUPPLIER_TIMEOUT_MS leaves the attempt needing resolution', async () => {
    // The exposure is booked under ordinary workers: the short timeout is for the sync alone.
    const setup = await env.workers();
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-timeout', name: 'Late [sync-slow]' });
    await setup.close();
    const workers = await env.workers({ SANDBOX_SLOW_MS: '3000', SUPPLIER_TIMEOUT_MS: '500' });
    const { cohort } = await json<Synced>(await syncAudience(api, token, campaignId));
    const done = await waitForCohort(api, token, cohort.id, (c) => c.state !== 'syncing');
    expect(done.state).toBe('needs-resolution');
    expect(done.attempts[0]!.detail).toMatchObject({ reason: expect.stringMatching(/no answer within 500 ms/) });
    await workers.close();
    // The slow supplier's late answer (if any) never turns it into a second call.
    expect(await ledgerOf(env, cohort.attempts[0]!.id)).toHaveLength(1);
  });

  test('a re-delivered job that finds its attempt in flight does not call the supplier again: the attempt needs resolution', async () => {
    const workers = await env.workers();
    const { campaignId, token } = await exposedCampaign(env, api, { org: 'org-crash' });
    await workers.close();
    // No worker runs: the job waits in its queue.
    const { cohort, attempt } = await json<Synced>(await syncAudience(api, token, campaignId));
    // A first delivery commits the attempt in flight and the supplier receives it; then the worker dies.
    const ctx = { db: env.db, sandboxSlowMs: 0 };
    const begun = await beginAudienceSync(env.db, audienceSupplierFor, { cohortId: cohort.id, attemptId: attempt.id }, ctx);
    if (begun.kind !== 'call') throw new Error('expected the first delivery to call the supplier');
    await begun.start.supplier.sync(begun.start.request, ctx);
    expect((await readCohort(api, token, cohort.id)).attempts[0]!.status).toBe('in-flight');

    const again = await env.workers();
    const done = await waitForCohort(api, token, cohort.id, (c) => c.state !== 'syncing');
    await again.close();
    expect(done.state).toBe('needs-resolution');
    expect(done.attempts[0]).toMatchObject({ status: 'needs-resolution', detail: { cause: 'redelivered' } });
    const ledger = await ledgerOf(env, attempt.id);
    expect(ledger).toHaveLength(1);
    expect(ledger[0].idempotency_key).toBe(attempt.id);
  });
});

describe('refusals record nothing', () => {
  let exposed: { campaignId: string; token: string };
  beforeAll(async () => {
    const workers = await env.workers();
    exposed = await exposedCampaign(env, api, {
      org: 'org-refuse',
      lines: [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 4_000 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 4_000 },
      ],
    });
    await workers.close();
  });

  const refused: Array<[string, unknown]> = [
    ['an empty body', {}],
    ['exposedOn empty', syncBody({ exposedOn: [] })],
    ['exposedOn not an array', syncBody({ exposedOn: 'ctv' })],
    ['an unknown exposedOn channel', syncBody({ exposedOn: ['radio'] })],
    ['an unknown notExposedOn channel', syncBody({ notExposedOn: ['radio'] })],
    ['a channel both exposed and not exposed', syncBody({ exposedOn: ['ctv', 'audio'], notExposedOn: ['audio'] })],
    ['a repeated exposedOn channel', syncBody({ exposedOn: ['ctv', 'ctv'] })],
    ['a repeated notExposedOn channel', syncBody({ notExposedOn: ['tv', 'tv'] })],
    ['a missing channel', syncBody({ channel: undefined })],
    ['an unknown channel', syncBody({ channel: 'radio' })],
    ['an unknown purpose', syncBody({ purpose: 'retargeting' })],
    ['an empty adapterKey', syncBody({ adapterKey: '' })],
    ['an unknown executionMode', syncBody({ executionMode: 'staging' })],
    ['an unknown field', syncBody({ campaignId: randomUUID() })],
    ['an unknown adapter', syncBody({ adapterKey: 'sandbox-radio' })],
  ];
  test.each(refused)('%s is refused with 400 and nothing changes', async (_name, body) => {
    const before = await footprint(env);
    const res = await syncAudience(api, exposed.token, exposed.campaignId, body);
    expect(res.status).toBe(400);
    expect(await footprint(env)).toEqual(before);
  });

  test('the cross-field refusal names the channel and the field', async () => {
    const res = await syncAudience(api, exposed.token, exposed.campaignId, syncBody({ notExposedOn: ['ctv'] }));
    const body = await json<{ code: string; errors: Array<{ path: string; message: string }> }>(res);
    expect(body.code).toBe('validation_failed');
    expect(body.errors).toEqual([expect.objectContaining({ path: 'body.notExposedOn', message: expect.stringMatching(/ctv/) })]);
  });

  test.each([
    ['a workflow adapter', syncBody({ adapterKey: 'manual' }), 'audience_sync_unsupported'],
    ['an adapter that does not serve the channel', syncBody({ adapterKey: 'sandbox-audio' }), 'adapter_channel_unsupported'],
    ['a sandbox adapter in live mode', syncBody({ executionMode: 'live' }), 'adapter_mode_unsupported'],
    ['a live adapter in sandbox mode', syncBody({ adapterKey: 'live-ctv' }), 'adapter_mode_unsupported'],
  ])('%s is refused with 422 and nothing changes', async (_name, body, code) => {
    const before = await footprint(env);
    const res = await syncAudience(api, exposed.token, exposed.campaignId, body);
    expect(res.status).toBe(422);
    expect((await json(res)).code).toBe(code);
    expect(await footprint(env)).toEqual(before);
  });

  test('no confirmed line on any exposedOn channel is 409 no_exposure_data, and nothing is recorded', async () => {
    const before = await footprint(env);
    const res = await syncAudience(api, exposed.token, exposed.campaignId, syncBody({ exposedOn: ['tv', 'cinema'] }));
    expect(res.status).toBe(409);
    expect((await json(res)).code).toBe('no_exposure_data');
    expect(await footprint(env)).toEqual(before);
  });

  test('a channel outside the caller’s product is 403 channel_not_entitled', async () => {
    const ctvOnly = await env.issuer.token({ org: 'org-refuse', user: 'ctv-buyer', product: 'flightdeck-ctv' });
    const { campaignId } = await json<{ campaign: { id: string } }>(
      await post(api, ctvOnly, '/api/v1/campaigns', {
        name: 'CTV only',
        clientName: 'Acme',
        startDate: '2099-03-01',
        endDate: '2099-03-31',
        budgetMinor: 1_000,
        maximumCommitmentMinor: 1_000,
        channels: ['ctv'],
      }),
    ).then((b) => ({ campaignId: b.campaign.id }));
    const before = await footprint(env);
    const res = await syncAudience(api, ctvOnly, campaignId, syncBody({ channel: 'audio', adapterKey: 'sandbox-audio' }));
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('channel_not_entitled');
    // The two-channel campaign is outside this product altogether: as invisible as another tenant's.
    expect((await syncAudience(api, ctvOnly, exposed.campaignId)).status).toBe(404);
    expect(await footprint(env)).toEqual(before);
  });

  test('another tenant’s campaign and cohorts are 404 on every route, exactly like ids that never existed', async () => {
    const res = await syncAudience(api, exposed.token, exposed.campaignId, syncBody({ adapterKey: 'native-staged' }));
    expect(res.status).toBe(202);
    const { cohort } = await json<Synced>(res);
    const stranger = await env.issuer.token({ org: 'org-stranger', user: 'eve' });
    const never = randomUUID();
    const pairs: Array<[string, string, unknown?]> = [
      [`/api/v1/campaigns/${exposed.campaignId}/sync-audience`, `/api/v1/campaigns/${never}/sync-audience`, syncBody()],
      [`/api/v1/campaigns/${exposed.campaignId}/cohorts`, `/api/v1/campaigns/${never}/cohorts`],
      [`/api/v1/identity/cohorts/${cohort.id}`, `/api/v1/identity/cohorts/${never}`],
      [`/api/v1/identity/cohorts/${cohort.id}`, '/api/v1/identity/cohorts/not-a-uuid'],
    ];
    const before = await footprint(env);
    for (const [theirs, missing, body] of pairs) {
      const call = (path: string) => (body ? post(api, stranger, path, body) : api.fetch(path, { token: stranger }));
      const [a, b] = [await call(theirs), await call(missing)];
      expect([a.status, b.status]).toEqual([404, 404]);
      expect(await problem(a)).toEqual(await problem(b));
    }
    expect(await footprint(env)).toEqual(before);
  });
});
