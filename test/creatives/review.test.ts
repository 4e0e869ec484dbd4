import fs from 'node:fs';
import path from 'node:path';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, launchPlan, post, waitForBooking } from '../support/bookings';
import { makeCreative, type CreativeBody } from '../support/creatives';
import { executeReview } from '../../shared/creatives/review-execution';
import { refreshStagedLines } from '../../shared/bookings/staged-lines';
import { ADAPTER_IMPLEMENTATIONS } from '../../workers/adapters/registry';
import { createLogger } from '../../shared/logger';
import { actors, DIGEST, prepare, STEP, type Prepared } from '../agent/support';

let env: TestEnv;
let api: TestApi;
let token: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  token = await env.issuer.token({ org: 'org-rv', user: 'designer' });
});
afterAll(() => env.close());

interface Review {
  id: string;
  status: string;
  version: number;
  reasons: string[] | null;
  providerReference: string | null;
}
const read = async (id: string, t = token) =>
  (
    await json<{ creative: CreativeBody & { reviews: Review[]; approvalHistory: Array<{ status: string; version: number }> } }>(
      await api.fetch(`/api/v1/creatives/${id}`, { token: t }),
    )
  ).creative;
async function reviewed(id: string, done: (r: Review) => boolean) {
  for (const deadline = Date.now() + 25_000; Date.now() < deadline;) {
    const c = await read(id);
    const last = c.reviews.at(-1);
    if (last && done(last)) return { creative: c, review: last };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('review did not finish');
}
const submit = (id: string, body: Record<string, unknown>, t = token, headers: Record<string, string> = {}) =>
  api.fetch(`/api/v1/creatives/${id}/submit`, {
    method: 'POST',
    token: t,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('supplier review in sandbox', () => {
  test('upload → create → revise → submit: the approval binds the version, fingerprint, metadata and adapter; a later revision voids it', async () => {
    const c = await makeCreative(api, token, 'ctv');
    const v2 = (await json<{ creative: CreativeBody }>(await post(api, token, `/api/v1/creatives/${c.id}/revise`, { headline: 'Summer' })))
      .creative;
    const res = await submit(c.id, { adapterKey: 'sandbox-ctv', channel: 'ctv' });
    expect(res.status).toBe(202);
    expect((await json<{ review: Review }>(res)).review).toMatchObject({ status: 'queued', version: 2 });
    // Workers start after the submit so the queued state above cannot race a fast worker.
    const workers = await env.workers();
    const { creative, review } = await reviewed(c.id, (r) => r.status === 'approved');
    expect(review.providerReference).toMatch(/^sbx-review-sandbox-ctv-/);
    expect(creative.reviewState).toBe('approved');
    expect(creative.approvals).toEqual([
      expect.objectContaining({
        adapterKey: 'sandbox-ctv',
        version: 2,
        assetFingerprint: v2.assetFingerprint,
        metadataDigest: v2.metadataDigest,
      }),
    ]);
    const ledger = await env.db('sandbox_ledger').where({ operation: 'creative-review' }).whereRaw("request->>'creativeId' = ?", [c.id]);
    expect(ledger).toHaveLength(1);
    expect(ledger[0].request.receivedFingerprint).toBe(c.assetFingerprint);

    const again = await submit(c.id, { adapterKey: 'sandbox-ctv' });
    expect((await json<{ review: Review }>(again)).review.id).toBe(review.id);

    await post(api, token, `/api/v1/creatives/${c.id}/revise`, { cta: 'Buy now' });
    const after = await read(c.id);
    expect(after.approvals).toEqual([]);
    expect(after.approvalHistory).toEqual([expect.objectContaining({ version: 2, status: 'superseded' })]);
    await workers.close();
  });

  test('the reject trigger records the reasons; a changed byte on disk is caught and rejected', async () => {
    const workers = await env.workers();
    const rejected = await makeCreative(api, token, 'ctv', { name: 'Bold claims review-reject' });
    await submit(rejected.id, { adapterKey: 'sandbox-ctv' });
    const { review } = await reviewed(rejected.id, (r) => r.status === 'rejected');
    expect(review.reasons!.length).toBeGreaterThan(0);

    await workers.close();
    const tampered = await makeCreative(api, token, 'ctv');
    const file = path.join(env.dataDir, 'assets', String((tampered.assetUrl as string).split('/').pop()));
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 1] ^= 0xff;
    fs.writeFileSync(file, bytes);
    await submit(tampered.id, { adapterKey: 'sandbox-ctv' });
    const resumed = await env.workers();
    const t = await reviewed(tampered.id, (r) => r.status === 'rejected');
    expect(t.review.reasons).toEqual(['The file received does not match its fingerprint.']);
    expect(t.creative.approvals).toEqual([]);
    await resumed.close();
  });

  test('an unknown review outcome waits for resolution: never resubmitted, not even by a re-delivered job', async () => {
    const workers = await env.workers();
    const c = await makeCreative(api, token, 'ctv', { name: 'Teaser review-unknown' });
    await submit(c.id, { adapterKey: 'sandbox-ctv' });
    const { review } = await reviewed(c.id, (r) => r.status === 'needs-resolution');
    const resubmit = await submit(c.id, { adapterKey: 'sandbox-ctv' });
    expect(resubmit.status).toBe(409);
    expect(await json(resubmit)).toMatchObject({ code: 'review_needs_resolution' });
    await workers.close();

    // A job re-delivered after its worker died finds the attempt in flight and does not send again.
    const d = await makeCreative(api, token, 'ctv');
    const { review: queued } = await json<{ review: Review }>(await submit(d.id, { adapterKey: 'sandbox-ctv' }));
    await env.db('creative_reviews').where({ id: queued.id }).update({ status: 'in-flight', attempt_id: 'att_interrupted' });
    const reviewer = ADAPTER_IMPLEMENTATIONS.get('sandbox-ctv')!.reviewer!;
    const result = await executeReview(env.db, reviewer, queued.id, {
      assetDir: path.join(env.dataDir, 'assets'),
      timeoutMs: 1000,
      context: { db: env.db, sandboxSlowMs: 0 },
      logger: createLogger('silent'),
      afterApproval: refreshStagedLines,
    });
    expect(result).toBe('needs-resolution');
    expect(await env.db('sandbox_ledger').whereRaw("request->>'creativeId' = ?", [d.id])).toHaveLength(0);
    expect(await env.db('sandbox_ledger').whereRaw("request->>'reviewId' = ?", [review.id])).toHaveLength(1);
  });

  test.each([
    ['an unknown adapter', { adapterKey: 'nobody' }, 400],
    ['a workflow adapter', { adapterKey: 'manual' }, 422],
    ['an adapter that does not run the channel', { adapterKey: 'sandbox-dooh' }, 422],
    ['a channel other than the creative', { adapterKey: 'sandbox-ctv', channel: 'tv' }, 400],
    ['a live adapter without approved access', { adapterKey: 'live-ctv' }, 422],
    ['an unknown field', { adapterKey: 'sandbox-ctv', priority: 'high' }, 400],
    ['no adapter', {}, 400],
  ])('%s is refused and queues nothing', async (_n, body, status) => {
    const c = await makeCreative(api, token, 'ctv');
    const outbox = Number((await env.db('outbox').count({ n: '*' }))[0]!.n);
    expect((await submit(c.id, body)).status).toBe(status);
    expect(await env.db('creative_reviews').where({ creative_id: c.id })).toHaveLength(0);
    expect(Number((await env.db('outbox').count({ n: '*' }))[0]!.n)).toBe(outbox);
  });
});

describe('creatives in plans and bookings', () => {
  test('booking lines carry the creative versions approved into the plan; a revision after approval stops the launch', async () => {
    const c = await makeCreative(api, token, 'ctv');
    const { booking } = await launchPlan(
      env,
      api,
      [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 1_000, creativeIds: [c.id] }],
      'org-rv',
    );
    expect(booking.lines[0]!.creatives).toEqual([
      expect.objectContaining({
        id: c.id,
        name: c.name,
        format: 'video-30s',
        assetUrl: c.assetUrl,
        assetFingerprint: c.assetFingerprint,
        version: 1,
      }),
    ]);

    const d = await makeCreative(api, token, 'ctv');
    const { campaignId, planVersion } = await draftCampaign(api, token, [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 1_000, creativeIds: [d.id] },
    ]);
    await approve(api, token, campaignId, planVersion);
    const planRead = async () =>
      (await json<{ plan: { approvalCurrent: boolean } }>(await api.fetch(`/api/v1/campaigns/${campaignId}`, { token }))).plan;
    expect((await planRead()).approvalCurrent).toBe(true);
    await post(api, token, `/api/v1/creatives/${d.id}/revise`, { headline: 'Changed after approval' });
    // The plan's read sees the creative as it is now: its approval is no longer current.
    expect((await planRead()).approvalCurrent).toBe(false);
    const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'snapshot_changed' });
  });

  test("a creative of another channel, or another tenant's, cannot join a plan line", async () => {
    const dooh = await makeCreative(api, token, 'dooh');
    const mine = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 }]);
    expect(
      (
        await post(
          api,
          token,
          `/api/v1/campaigns/${mine.campaignId}/plan`,
          { expectedVersion: 1, lines: [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: [dooh.id] }] },
          'PUT',
        )
      ).status,
    ).toBe(400);
    const other = await env.issuer.token({ org: 'org-rv-2' });
    const theirs = await makeCreative(api, other, 'ctv');
    expect(
      (
        await post(
          api,
          token,
          `/api/v1/campaigns/${mine.campaignId}/plan`,
          { expectedVersion: 1, lines: [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: [theirs.id] }] },
          'PUT',
        )
      ).status,
    ).toBe(404);
  });

  test('a native staged line becomes enableable once its creatives are approved by that supplier', async () => {
    const workers = await env.workers();
    const c = await makeCreative(api, token, 'social');
    const { booking, token: buyer } = await launchPlan(
      env,
      api,
      [{ channel: 'social', adapterKey: 'native-staged', budgetMinor: 1_000, creativeIds: [c.id] }],
      'org-rv',
    );
    const staged = await waitForBooking(api, buyer, booking.id, (b) => b.lines[0]!.status === 'stopped');
    expect(staged.lines[0]).toMatchObject({ enableable: false });
    await submit(c.id, { adapterKey: 'native-staged' });
    await reviewed(c.id, (r) => r.status === 'approved');
    const enabled = await waitForBooking(api, buyer, booking.id, (b) => (b.lines[0] as { enableable?: boolean }).enableable === true);
    expect(enabled.lines[0]!.status).toBe('stopped');
    await workers.close();
  });
});

test('creative.submit by a delegated agent needs the bound headers', async () => {
  const a = await actors(env, api, 'org-rv-agent', { allowedActions: ['creative.submit'], budgetCeilingMinor: 0, currency: 'GBP' });
  const c = await makeCreative(api, a.human, 'ctv');
  expect((await submit(c.id, { adapterKey: 'sandbox-ctv' }, a.agent)).status).toBe(403);
  const p = await json<Prepared>(await prepare(api, a.agent, 'creative.submit', { creativeId: c.id, adapterKey: 'sandbox-ctv' }, 0));
  const { executeStep } = await json<{ executeStep: { id: string } }>(
    await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest }),
  );
  const res = await submit(c.id, { adapterKey: 'sandbox-ctv' }, a.agent, { [STEP]: executeStep.id, [DIGEST]: p.actionDigest });
  expect(res.status).toBe(202);
  expect(await env.db('creative_reviews').where({ creative_id: c.id })).toHaveLength(1);
});
