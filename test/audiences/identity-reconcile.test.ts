import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import type { RunningWorkers } from '../../workers/main';
import { post } from '../support/bookings';
import { footprint, readCohort, syncAudience, syncBody, syncedCohort, waitForCohort, type CohortBody } from './support';

let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let operator: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  workers = await env.workers();
  operator = await env.issuer.token({ org: 'org-a', user: 'olivia-ops', permissions: ['operator:reconcile'] });
});
afterAll(async () => {
  await workers.close();
  await env.close();
});

const EVIDENCE = 'ticket:SUP-4821/audience-missing';
const resolvePath = (cohortId: string, attemptId: string) => `/api/v1/identity/cohorts/${cohortId}/attempts/${attemptId}/resolve`;
const resolveBody = (overrides: Record<string, unknown> = {}) => ({
  expectedRevision: 1,
  outcome: 'discard-unavailable-result',
  evidenceReference: EVIDENCE,
  ...overrides,
});
const resolve = (token: string, cohort: CohortBody, body: unknown = resolveBody(), attemptId = cohort.attempts[0]!.id) =>
  post(api, token, resolvePath(cohort.id, attemptId), body);
const unknownCohort = (org = 'org-a') => syncedCohort(env, api, { org, name: 'Lost answer [sync-unknown]' });

describe('resolving an attempt whose outcome is unknown', () => {
  test('with evidence: 200, the attempt is discarded with its resolution, the cohort is discarded at revision 2; nothing is retried or queued', async () => {
    const { cohort, token } = await unknownCohort();
    expect(cohort).toMatchObject({ state: 'needs-resolution', revision: 1 });
    const before = await footprint(env);

    const res = await resolve(operator, cohort);
    expect(res.status).toBe(200);
    const { cohort: after } = await json<{ cohort: CohortBody }>(res);
    expect(after).toMatchObject({ id: cohort.id, state: 'discarded', revision: 2 });
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({
      id: cohort.attempts[0]!.id,
      revision: 1,
      status: 'discarded',
      resolution: { outcome: 'discard-unavailable-result', evidenceReference: EVIDENCE, by: 'olivia-ops', at: expect.any(String) },
    });
    // The unknown outcome stays on the attempt as the record of why it needed a person.
    expect(after.attempts[0]!.detail).toMatchObject({ reason: expect.stringMatching(/answer was lost/) });
    expect(await readCohort(api, token, cohort.id)).toEqual(after);

    await new Promise((r) => setTimeout(r, 300));
    expect(await footprint(env)).toEqual(before);
  });

  test('a stale expectedRevision is 409 revision_conflict and changes nothing', async () => {
    const { cohort, token } = await unknownCohort();
    const res = await resolve(operator, cohort, resolveBody({ expectedRevision: 2 }));
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'revision_conflict', recovery: 'correctable' });
    expect(await readCohort(api, token, cohort.id)).toEqual(cohort);
  });

  test('an attempt that does not need resolution is 409 invalid_transition: a synced one, or one already discarded', async () => {
    const synced = await syncedCohort(env, api, { name: 'Fine' });
    expect(synced.cohort.state).toBe('synced');
    const res = await resolve(operator, synced.cohort);
    expect(res.status).toBe(409);
    expect((await json(res)).code).toBe('invalid_transition');
    expect(await readCohort(api, synced.token, synced.cohort.id)).toEqual(synced.cohort);

    const { cohort } = await unknownCohort();
    expect((await resolve(operator, cohort)).status).toBe(200);
    const again = await resolve(operator, cohort, resolveBody({ expectedRevision: 2 }));
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('invalid_transition');
  });

  test('concurrent resolutions of one attempt: exactly one wins, the others get 409', async () => {
    const { cohort } = await unknownCohort();
    const results = await Promise.all(Array.from({ length: 4 }, () => resolve(operator, cohort)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
  });
});

describe('a second sync of the same audience', () => {
  test('is refused 409 while the first needs resolution, and accepted once an operator has discarded it', async () => {
    const { cohort, token, campaignId } = await unknownCohort();
    const before = await footprint(env);
    const blocked = await syncAudience(api, token, campaignId);
    expect(blocked.status).toBe(409);
    expect((await json(blocked)).code).toBe('audience_sync_unresolved');
    expect(await footprint(env)).toEqual(before);
    // Another audience (a different purpose) is not held up by it.
    const other = await syncAudience(api, token, campaignId, syncBody({ purpose: 'suppression' }));
    expect(other.status).toBe(202);
    // Let it finish, so that no later footprint comparison sees its work land.
    const { cohort: suppression } = await json<{ cohort: CohortBody }>(other);
    await waitForCohort(api, token, suppression.id, (c) => c.state !== 'syncing');

    expect((await resolve(operator, cohort)).status).toBe(200);
    const res = await syncAudience(api, token, campaignId);
    expect(res.status).toBe(202);
    const { cohort: next } = await json<{ cohort: CohortBody }>(res);
    expect(next.id).not.toBe(cohort.id);
    await waitForCohort(api, token, next.id, (c) => c.state === 'needs-resolution');
  });
});

describe('refusals change nothing', () => {
  let target: CohortBody;
  let owner: string;
  beforeAll(async () => {
    const made = await unknownCohort();
    target = made.cohort;
    owner = made.token;
  });
  afterEach(async () => {
    expect(await readCohort(api, owner, target.id)).toEqual(target);
  });

  const longRef = `a${'b'.repeat(120)}`;
  test.each<[string, unknown]>([
    ['an empty body', {}],
    ['expectedRevision missing', resolveBody({ expectedRevision: undefined })],
    ['expectedRevision 0', resolveBody({ expectedRevision: 0 })],
    ['expectedRevision negative', resolveBody({ expectedRevision: -1 })],
    ['expectedRevision not an integer', resolveBody({ expectedRevision: 1.5 })],
    ['expectedRevision as a string', resolveBody({ expectedRevision: '1' })],
    ['another outcome', resolveBody({ outcome: 'applied' })],
    ['outcome missing', resolveBody({ outcome: undefined })],
    ['evidenceReference missing', resolveBody({ evidenceReference: undefined })],
    ['evidenceReference of 2 characters', resolveBody({ evidenceReference: 'ab' })],
    ['evidenceReference of 121 characters', resolveBody({ evidenceReference: longRef })],
    ['evidenceReference starting with a dash', resolveBody({ evidenceReference: '-ticket-1' })],
    ['evidenceReference with a space', resolveBody({ evidenceReference: 'ticket 1' })],
    ['an unknown field', resolveBody({ note: 'gone' })],
  ])('%s is refused with 400', async (_name, body) => {
    const before = await footprint(env);
    const res = await resolve(operator, target, body);
    expect(res.status).toBe(400);
    expect(await footprint(env)).toEqual(before);
  });

  test('the evidence reference bounds are inclusive: 3 and 120 characters are accepted by the schema', async () => {
    // A stale revision proves the body passed validation without resolving anything.
    for (const evidenceReference of ['a.b', `a${'b'.repeat(119)}`]) {
      const res = await resolve(operator, target, resolveBody({ evidenceReference, expectedRevision: 9 }));
      expect((await json(res)).code).toBe('revision_conflict');
    }
  });

  test('a path id over 100 characters is 400; ids that are not uuids, or name no attempt of this cohort, are 404', async () => {
    const long = 'a'.repeat(101);
    expect((await post(api, operator, resolvePath(long, target.attempts[0]!.id), resolveBody())).status).toBe(400);
    expect((await post(api, operator, resolvePath(target.id, long), resolveBody())).status).toBe(400);
    expect((await post(api, operator, resolvePath('cohort-1', target.attempts[0]!.id), resolveBody())).status).toBe(404);
    expect((await post(api, operator, resolvePath(target.id, 'attempt-1'), resolveBody())).status).toBe(404);
    expect((await post(api, operator, resolvePath(target.id, randomUUID()), resolveBody())).status).toBe(404);
    const other = await syncedCohort(env, api, { name: 'Other [sync-unknown]' });
    expect((await resolve(operator, target, resolveBody(), other.cohort.attempts[0]!.id)).status).toBe(404);
  });

  test('another tenant’s operator gets the same 404 as for a cohort that never existed', async () => {
    const stranger = await env.issuer.token({ org: 'org-b', user: 'mallory', permissions: ['operator:reconcile'] });
    const theirs = await resolve(stranger, target);
    const never = await post(api, stranger, resolvePath(randomUUID(), randomUUID()), resolveBody());
    expect([theirs.status, never.status]).toEqual([404, 404]);
    const strip = async (r: Response) => ({ ...(await json(r)), requestId: undefined });
    expect(await strip(theirs)).toEqual(await strip(never));
  });

  test('a human without operator:reconcile is 403 permission_required', async () => {
    const res = await resolve(owner, target);
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('permission_required');
  });

  test('a delegated agent is 403 human_required, even with operator:reconcile', async () => {
    const agent = await env.issuer.token({ org: 'org-a', user: 'olivia-ops', permissions: ['operator:reconcile'], agent: 'ops-bot' });
    const res = await resolve(agent, target);
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('human_required');
  });

  test('refused callers learn nothing from the body: a 403 comes before validation', async () => {
    const res = await resolve(owner, target, { nonsense: true });
    expect(res.status).toBe(403);
  });
});
