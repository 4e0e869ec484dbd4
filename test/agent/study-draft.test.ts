import { fundWallet } from '../support/wallet';
import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { createDb } from '../../shared/db/knex';
import { post } from '../support/bookings';
import { DIGEST, STEP, actors, prepare, type Prepared } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

interface Study {
  id: string;
  revision: number;
  status: string;
  approvals: Array<{ used: boolean }>;
}

/** A study with a funded human approval of a 1000-respondent quote (200000 minor units). */
async function fundedStudy(org: string, token: string) {
  await env
    .db('workspaces')
    .insert({ id: org, name: org, pixel_key: `px_${randomUUID()}` })
    .onConflict('id')
    .ignore();
  await fundWallet(env, org, 1_000_000);
  const { study } = await json<{ study: Study }>(await post(api, token, '/api/v1/brand-lift-studies', { name: 'Awareness lift' }));
  const { quote } = await json<{ quote: { id: string; amountMinor: number } }>(
    await post(api, token, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 1000 }),
  );
  const approved = await post(api, token, `/api/v1/brand-lift-studies/${study.id}/approvals`, { quoteId: quote.id });
  const { approval } = await json<{ approval: { id: string } }>(approved);
  return { studyId: study.id, quoteId: quote.id, approvalId: approval.id, amountMinor: quote.amountMinor, status: approved.status };
}

function draft(token: string, studyId: string, body: unknown, key?: string, extra: Record<string, string> = {}, via: TestApi = api) {
  return via.fetch(`/api/v1/brand-lift-studies/${studyId}/draft`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}), ...extra },
    body: JSON.stringify(body),
  });
}
const studyOf = async (token: string, id: string) =>
  (await json<{ study: Study }>(await api.fetch(`/api/v1/brand-lift-studies/${id}`, { token }))).study;

describe('POST /api/v1/brand-lift-studies/{studyId}/draft', () => {
  test('drafts against a funded human approval; the same key and body replays the first response without running again', async () => {
    const human = await env.issuer.token({ org: 'org-study', user: 'lead' });
    const s = await fundedStudy('org-study', human);
    expect(s.status).toBe(201);
    expect(s.amountMinor).toBe(200_000);
    expect((await env.db('wallets').where({ advertiser_id: 'org-study' }).first()).reserved_minor).toBe('200000');
    const body = { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    const key = randomUUID();
    const first = await draft(human, s.studyId, body, key);
    expect(first.status).toBe(200);
    const firstBody = await json(first);
    expect(firstBody).toMatchObject({ study: { status: 'drafted', revision: 2, approvals: [{ used: true }] } });
    const replay = await draft(human, s.studyId, body, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(await json(replay)).toEqual(firstBody);
    expect((await studyOf(human, s.studyId)).revision).toBe(2);
  });

  test('the same key with a different body is a 409 and changes nothing', async () => {
    const human = await env.issuer.token({ org: 'org-study-2', user: 'lead' });
    const s = await fundedStudy('org-study-2', human);
    const key = randomUUID();
    const body = { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    expect((await draft(human, s.studyId, body, key)).status).toBe(200);
    const res = await draft(human, s.studyId, { ...body, expectedRevision: 2 }, key);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'idempotency_conflict' });
    expect((await studyOf(human, s.studyId)).revision).toBe(2);
  });

  test('errors are replayed too: a refused draft answers the same for the same key', async () => {
    const human = await env.issuer.token({ org: 'org-study-3', user: 'lead' });
    const s = await fundedStudy('org-study-3', human);
    const key = randomUUID();
    const stale = { expectedRevision: 5, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    const first = await draft(human, s.studyId, stale, key);
    expect(first.status).toBe(409);
    const again = await draft(human, s.studyId, stale, key);
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await json(again)).toEqual(await json(first));
  });

  test('concurrent duplicates with one key execute once', async () => {
    const human = await env.issuer.token({ org: 'org-study-4', user: 'lead' });
    const s = await fundedStudy('org-study-4', human);
    const key = randomUUID();
    const body = { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    const results = await Promise.all(Array.from({ length: 8 }, () => draft(human, s.studyId, body, key)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((x) => x === 200 || x === 409)).toBe(true);
    for (const r of results.filter((x) => x.status === 409)) expect(await json(r)).toMatchObject({ code: 'idempotency_in_flight' });
    expect((await studyOf(human, s.studyId)).revision).toBe(2);
    expect(await env.db('idempotency_records').where({ idempotency_key: key })).toHaveLength(1);
  });

  test('a key whose first request died mid-flight is never re-run: 409 outcome unknown', async () => {
    const human = await env.issuer.token({ org: 'org-study-stuck', user: 'lead' });
    const s = await fundedStudy('org-study-stuck', human);
    const key = randomUUID();
    const body = { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    expect((await draft(human, s.studyId, body, key)).status).toBe(200);
    // As if that first request had crashed before completing its record, six minutes ago.
    await env
      .db('idempotency_records')
      .where({ idempotency_key: key })
      .update({ state: 'in-flight', created_at: new Date(Date.now() - 6 * 60_000) });
    const res = await draft(human, s.studyId, body, key);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'idempotency_outcome_unknown', recovery: 'terminal' });
  });

  test('a transient failure is not stored as the answer: the retry with the same key runs and drafts', async () => {
    const human = await env.issuer.token({ org: 'org-study-transient', user: 'lead' });
    const s = await fundedStudy('org-study-transient', human);
    const body = { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    const key = randomUUID();
    const impatientDb = createDb(env.database.url, { lockTimeoutMs: 200 });
    const impatient = await env.api({}, { db: impatientDb });
    try {
      // Someone else holds the study row: the first attempt gives up on the lock and changes nothing.
      const holder = await env.db.transaction();
      await holder('brand_lift_studies').where({ id: s.studyId }).forUpdate();
      const first = await draft(human, s.studyId, body, key, {}, impatient);
      await holder.rollback();
      expect(first.status).toBe(503);
      expect(await json(first)).toMatchObject({ code: 'database_unavailable', recovery: 'transient' });
      expect((await studyOf(human, s.studyId)).revision).toBe(1);

      const retry = await draft(human, s.studyId, body, key, {}, impatient);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotency-replayed')).toBeNull();
      expect(await json(retry)).toMatchObject({ study: { status: 'drafted', revision: 2 } });
      const replay = await draft(human, s.studyId, body, key, {}, impatient);
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
      expect(await env.db('idempotency_records').where({ idempotency_key: key })).toHaveLength(1);
    } finally {
      await impatient.close();
      await impatientDb.destroy();
    }
  });

  test.each([
    ['no Idempotency-Key', undefined],
    ['an Idempotency-Key that is not a uuid', 'retry-1'],
  ])('%s is a 400 and changes nothing', async (_n, key) => {
    const human = await env.issuer.token({ org: 'org-study-5', user: 'lead' });
    const s = await fundedStudy('org-study-5', human);
    const res = await draft(
      human,
      s.studyId,
      { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId },
      key,
    );
    expect(res.status).toBe(400);
    expect((await studyOf(human, s.studyId)).revision).toBe(1);
  });

  test('bounds and state: bad bodies are 400; stale revisions, a used approval, a foreign study are refused', async () => {
    const human = await env.issuer.token({ org: 'org-study-6', user: 'lead' });
    const s = await fundedStudy('org-study-6', human);
    const ok = { expectedRevision: 1, expectedConnectionRevision: null, quoteId: s.quoteId, approvalId: s.approvalId };
    for (const bad of [
      { ...ok, expectedRevision: 0 },
      { ...ok, expectedRevision: 2147483648 },
      { ...ok, expectedConnectionRevision: -1 },
      { ...ok, quoteId: 'q' },
      { ...ok, extra: 1 },
      { expectedRevision: 1 },
    ]) {
      expect((await draft(human, s.studyId, bad, randomUUID())).status).toBe(400);
    }
    expect((await draft(human, 'not-a-uuid', ok, randomUUID())).status).toBe(400);
    expect(await json(await draft(human, s.studyId, { ...ok, expectedConnectionRevision: 3 }, randomUUID()))).toMatchObject({
      code: 'revision_conflict',
    });
    const stranger = await env.issuer.token({ org: 'org-study-other', user: 'x' });
    expect((await draft(stranger, s.studyId, ok, randomUUID())).status).toBe(404);
    expect((await draft(human, s.studyId, ok, randomUUID())).status).toBe(200);
    const reused = await draft(human, s.studyId, { ...ok, expectedRevision: 2 }, randomUUID());
    expect(reused.status).toBe(409);
  });

  test('an unfunded study cannot be approved (409) and nothing is reserved', async () => {
    const human = await env.issuer.token({ org: 'org-study-poor', user: 'lead' });
    await env.db('workspaces').insert({ id: 'org-study-poor', name: 'poor', pixel_key: `px_${randomUUID()}` });
    const { study } = await json<{ study: Study }>(await post(api, human, '/api/v1/brand-lift-studies', { name: 'Lift' }));
    const { quote } = await json<{ quote: { id: string } }>(
      await post(api, human, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 500 }),
    );
    const res = await post(api, human, `/api/v1/brand-lift-studies/${study.id}/approvals`, { quoteId: quote.id });
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'unfunded' });
    expect(await env.db('study_approvals').where({ study_id: study.id })).toHaveLength(0);
  });
});

describe('study.draft by a delegated agent', () => {
  test('the agent prepares with the funded commitment (no new reservation), a human approves, the agent executes bound and idempotent', async () => {
    const mandate = { allowedActions: ['study.draft'], budgetCeilingMinor: 500_000, currency: 'GBP' };
    const a = await actors(env, api, 'org-study-agent', mandate);
    const s = await fundedStudy('org-study-agent', a.human);
    // A generic agent approval can never fund a study: only a human can.
    expect((await post(api, a.agent, `/api/v1/brand-lift-studies/${s.studyId}/approvals`, { quoteId: s.quoteId })).status).toBe(403);
    const parameters = {
      studyId: s.studyId,
      expectedRevision: 1,
      expectedConnectionRevision: null,
      quoteId: s.quoteId,
      approvalId: s.approvalId,
    };
    expect((await prepare(api, a.agent, 'study.draft', parameters, 0)).status).toBe(409);
    const prepared = await prepare(api, a.agent, 'study.draft', parameters, 200_000);
    expect(prepared.status).toBe(201);
    const p = await json<Prepared & { commitment: { incrementalReservationMinor: number } }>(prepared);
    expect(p.commitment).toMatchObject({ budgetMinor: 200_000, incrementalReservationMinor: 0, policy: 'study-commitment' });
    const { executeStep } = await json<{ executeStep: { id: string } }>(
      await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest }),
    );
    const { studyId, ...body } = parameters;
    const key = randomUUID();
    expect((await draft(a.agent, studyId, body, key)).status).toBe(403);
    const done = await draft(a.agent, studyId, body, randomUUID(), { [STEP]: executeStep.id, [DIGEST]: p.actionDigest });
    expect(done.status).toBe(200);
    expect((await studyOf(a.human, studyId)).status).toBe('drafted');
    expect((await env.db('wallets').where({ advertiser_id: 'org-study-agent' }).first()).reserved_minor).toBe('200000');
  });
});
