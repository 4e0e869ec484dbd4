import { createHash, randomUUID } from 'node:crypto';
import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { upload } from '../support/creatives';
import { creativeBody } from '../support/creative-samples';
import { mp4Sample, webmSample } from '../support/media-samples';
import { until } from '../support/wait';
import { grantSellerAccess } from '../support/adcp-buy';
import {
  CLICKABLE_VIDEO_FORMAT,
  DISPLAY_FORMAT,
  HEADLINE_MAX,
  LANDING_SLOT,
  MIN_VIDEO_WIDTH,
  TITLED_VIDEO_FORMAT,
  VIDEO_FORMAT,
  VIDEO_SLOT,
  startTestSeller,
  type TestSeller,
} from '../support/adcp-test-seller';
import { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';
import { adcpReviewer } from '../../workers/adapters/adcp/review';
import type { RunningWorkers } from '../../workers/main';
import { subscribe } from '../support/webhooks';

/**
 * A creative's review on an AdCP seller is sync_creatives carrying the media as a URL asset in the
 * slot the seller's format names, with the width, height and length read from the bytes; the
 * seller fetches the bytes from our immutable asset address and judges them.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let connection: AdcpSellerConnection;

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    PUBLIC_BASE_URL: api.deps.urls.base,
    WORKER_QUEUES: 'creative-review.adcp-ctl',
    // Reviews the seller holds are checked when a test says (pollSupplierTasksNow), not on a timer.
    ADCP_TASK_POLL_INTERVAL_MS: '3600000',
  });
  connection = new AdcpSellerConnection(
    { key: 'ctl', agentUrl: seller.agentUrl, credentialEnv: 'FLIGHTDECK_TEST_ADCP_TOKEN', channels: ['ctv'], sandbox: false },
    { capabilitiesTtlMs: 60_000 },
  );
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
  await connection?.close();
});

type Review = { status: string; reasons: string[] | null; providerReference: string | null };

/** Submits the creative to the seller through the API and waits for the review to settle. */
async function reviewed(token: string, creativeId: string): Promise<Review> {
  expect((await post(api, token, `/api/v1/creatives/${creativeId}/submit`, { adapterKey: 'adcp-ctl', channel: 'ctv' })).status).toBe(202);
  let review: Review | undefined;
  await until('the seller reviews the creative', async () => {
    const body = await json<{ creative: { reviews: Review[] } }>(await api.fetch(`/api/v1/creatives/${creativeId}`, { token }));
    review = body.creative.reviews.at(-1);
    return review?.status === 'approved' || review?.status === 'rejected';
  });
  return review!;
}

async function videoCreative(token: string, bytes: Buffer, format = VIDEO_FORMAT, contentType: 'video/mp4' | 'video/webm' = 'video/mp4') {
  const asset = await upload(api, token, contentType, bytes);
  const res = await post(api, token, '/api/v1/creatives', creativeBody('ctv', asset.url, { format }));
  expect(res.status).toBe(201);
  return { asset, creative: (await json<{ creative: { id: string; assetFingerprint: string } }>(res)).creative };
}

/** A buyer in a workspace (made on its first request) that ops granted an account on the seller. */
async function buyer(org: string): Promise<string> {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
  await grantSellerAccess(env.db, org, 'adcp-ctl');
  return token;
}

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

test("the video goes in the format's slot with its real size and length; the seller fetches the exact bytes and approves", async () => {
  const token = await buyer('org-crt-ok');
  const bytes = mp4Sample({ width: 1920, height: 1080, durationMs: 15_000 });
  const { asset, creative } = await videoCreative(token, bytes);

  const review = await reviewed(token, creative.id);
  expect(review).toMatchObject({ status: 'approved', providerReference: `${creative.id}-v1` });
  const synced = seller.creatives.find((c) => c.creative.creative_id === `${creative.id}-v1`)!;
  expect(synced.creative.assets).toEqual({
    [VIDEO_SLOT]: {
      asset_type: 'video',
      url: `${api.deps.urls.base}${asset.url}`,
      width: 1920,
      height: 1080,
      duration_ms: 15_000,
      file_size_bytes: bytes.length,
      container_format: 'mp4',
    },
  });
  expect(sha(synced.fetched!)).toBe(creative.assetFingerprint);
  // The approval launch checks is the seller's.
  const approvals = await env.db('creative_approvals').where({ creative_id: creative.id, adapter_key: 'adcp-ctl' });
  expect(approvals).toHaveLength(1);
}, 60_000);

test('a WebM video goes with the size and length read from its own bytes, and the seller approves it', async () => {
  const token = await buyer('org-crt-webm');
  const bytes = webmSample({ width: 1280, height: 720, durationMs: 15_000 });
  const { asset, creative } = await videoCreative(token, bytes, VIDEO_FORMAT, 'video/webm');

  expect(await reviewed(token, creative.id)).toMatchObject({ status: 'approved' });
  const synced = seller.creatives.find((c) => c.creative.creative_id === `${creative.id}-v1`)!;
  expect(synced.creative.assets).toEqual({
    [VIDEO_SLOT]: {
      asset_type: 'video',
      url: `${api.deps.urls.base}${asset.url}`,
      width: 1280,
      height: 720,
      duration_ms: 15_000,
      file_size_bytes: bytes.length,
      container_format: 'webm',
    },
  });
  expect(sha(synced.fetched!)).toBe(creative.assetFingerprint);
}, 60_000);

test("a WebM too narrow for the seller's format is refused by the seller, on the width read from its bytes", async () => {
  const token = await buyer('org-crt-webm-narrow');
  const { creative } = await videoCreative(token, webmSample({ width: 320, height: 180 }), VIDEO_FORMAT, 'video/webm');
  const review = await reviewed(token, creative.id);
  expect(review.status).toBe('rejected');
  expect(review.reasons!.join(' ')).toContain(String(MIN_VIDEO_WIDTH));
}, 60_000);

test("a video too narrow for the seller's format is rejected with the seller's reason, and earns no approval", async () => {
  const token = await buyer('org-crt-narrow');
  const { creative } = await videoCreative(token, mp4Sample({ width: 320, height: 180 }));

  const review = await reviewed(token, creative.id);
  expect(review.status).toBe('rejected');
  expect(review.reasons!.join(' ')).toContain(`320 wide; this format needs ${MIN_VIDEO_WIDTH}`);
  expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(0);
}, 60_000);

describe("a format with text slots: the creative's words fill them", () => {
  test('a headline and call to action set by revision go in the slots the format names, and the seller approves', async () => {
    const token = await buyer('org-crt-titled');
    const bytes = mp4Sample({ width: 1280, height: 720 });
    const { creative } = await videoCreative(token, bytes, TITLED_VIDEO_FORMAT);
    const revised = await post(api, token, `/api/v1/creatives/${creative.id}/revise`, { headline: 'Lisbon for spring', cta: 'Book now' });
    expect(revised.status).toBe(200);

    expect(await reviewed(token, creative.id)).toMatchObject({ status: 'approved' });
    const synced = seller.creatives.find((c) => c.creative.creative_id === `${creative.id}-v2`)!;
    expect(Object.keys(synced.creative.assets).sort()).toEqual(['cta_text', 'headline', VIDEO_SLOT]);
    expect(synced.creative.assets.headline).toEqual({ asset_type: 'text', content: 'Lisbon for spring' });
    expect(synced.creative.assets.cta_text).toEqual({ asset_type: 'text', content: 'Book now' });
  }, 60_000);

  test('without a headline, or with one longer than the slot, nothing is sent and the review says why', async () => {
    const token = await buyer('org-crt-untitled');
    const { creative } = await videoCreative(token, mp4Sample({ width: 1280, height: 720 }), TITLED_VIDEO_FORMAT);
    const before = seller.creatives.length;
    const bare = await reviewed(token, creative.id);
    expect(bare.status).toBe('rejected');
    expect(bare.reasons!.join(' ')).toContain('requires text "headline"');

    expect((await post(api, token, `/api/v1/creatives/${creative.id}/revise`, { headline: 'x'.repeat(HEADLINE_MAX + 1) })).status).toBe(
      200,
    );
    const long = await reviewed(token, creative.id);
    expect(long.status).toBe('rejected');
    expect(long.reasons!.join(' ')).toContain(`is ${HEADLINE_MAX + 1} characters`);
    expect(seller.creatives.length).toBe(before);
  }, 60_000);
});

test("a format's landing-page slot takes the creative's destination; without one, nothing is sent and the review says why", async () => {
  const token = await buyer('org-crt-clickable');
  const { creative } = await videoCreative(token, mp4Sample({ width: 1280, height: 720 }), CLICKABLE_VIDEO_FORMAT);
  const before = seller.creatives.length;
  const bare = await reviewed(token, creative.id);
  expect(bare.status).toBe('rejected');
  expect(bare.reasons!.join(' ')).toContain(`requires a clickthrough URL ("${LANDING_SLOT}"), and the creative has no destination`);
  expect(seller.creatives.length).toBe(before);

  const set = await post(api, token, `/api/v1/creatives/${creative.id}/destination`, { destinationUrl: 'https://acme.example/spring' });
  expect(set.status).toBe(200);
  expect(await reviewed(token, creative.id)).toMatchObject({ status: 'approved', providerReference: `${creative.id}-v2` });
  const synced = seller.creatives.find((c) => c.creative.creative_id === `${creative.id}-v2`)!;
  // The tracker slot is the seller's: only the landing page is filled.
  expect(Object.keys(synced.creative.assets).sort()).toEqual([LANDING_SLOT, VIDEO_SLOT]);
  expect(synced.creative.assets[LANDING_SLOT]).toEqual({ asset_type: 'url', url: 'https://acme.example/spring', url_type: 'clickthrough' });
}, 60_000);

/** The reviewer itself, over a stored creative, so what it sends (or not) is seen at the seller. */
async function reviewDirect(opts: { bytes: Buffer; format: string; publicBaseUrl?: string | null; via?: AdcpSellerConnection }) {
  const org = `org-crt-${randomUUID().slice(0, 8)}`;
  const token = await buyer(org);
  const { asset, creative } = await videoCreative(token, opts.bytes, opts.format);
  const before = seller.creatives.length;
  const outcome = await adcpReviewer(opts.via ?? connection, {
    publicBaseUrl: opts.publicBaseUrl === undefined ? api.deps.urls.base : opts.publicBaseUrl,
  }).review(
    {
      attemptId: `att_${randomUUID()}`,
      reviewId: randomUUID(),
      creativeId: creative.id,
      version: 1,
      name: 'Spring spot',
      channel: 'ctv',
      format: opts.format,
      bytes: opts.bytes,
      assetName: asset.name,
      contentType: 'video/mp4',
      assetFingerprint: creative.assetFingerprint,
      metadataDigest: 'd',
      copy: { copyText: 'Spring fares' },
    },
    { db: env.db, sandboxSlowMs: 0 },
  );
  return { outcome, sent: seller.creatives.slice(before) };
}

describe('refused before anything is sent', () => {
  test("a video for a format whose only slot is an image: the format's slots say so, and nothing reaches the seller", async () => {
    const { outcome, sent } = await reviewDirect({ bytes: mp4Sample(), format: DISPLAY_FORMAT });
    expect(outcome).toEqual({
      kind: 'rejected',
      reasons: [`The seller's format ${DISPLAY_FORMAT} takes no video asset; nothing was sent.`],
      providerReference: null,
    });
    expect(sent).toHaveLength(0);
  }, 60_000);

  test('an MP4 whose size cannot be read from its bytes is not sent without one', async () => {
    const unreadable = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(64, 7)]);
    const { outcome, sent } = await reviewDirect({ bytes: unreadable, format: VIDEO_FORMAT });
    expect(outcome).toMatchObject({ kind: 'rejected', reasons: [expect.stringContaining('width and height could not be read')] });
    expect(sent).toHaveLength(0);
  }, 60_000);

  test('without a public address the seller could fetch from, nothing is sent', async () => {
    const { outcome, sent } = await reviewDirect({ bytes: mp4Sample(), format: VIDEO_FORMAT, publicBaseUrl: null });
    expect(outcome).toMatchObject({ kind: 'rejected', reasons: [expect.stringContaining('PUBLIC_BASE_URL')] });
    expect(sent).toHaveLength(0);
  }, 60_000);
});

test("a format the seller does not list: the media goes under its kind's name, and the seller's review decides", async () => {
  const token = await buyer('org-crt-unlisted');
  const { creative } = await videoCreative(token, mp4Sample({ width: 640, height: 360 }), 'video-30s');
  expect((await reviewed(token, creative.id)).status).toBe('approved');
  const synced = seller.creatives.find((c) => c.creative.creative_id === `${creative.id}-v1`)!;
  expect(synced.creative.format_id.id).toBe('video-30s');
  expect(synced.creative.assets).toEqual({ video: expect.objectContaining({ asset_type: 'video', width: 640, height: 360 }) });
}, 60_000);

test('a seller that could not list its formats is asked again at the next review, not taken to have none', async () => {
  const fresh = new AdcpSellerConnection(connection.seller, { capabilitiesTtlMs: 60_000 });
  seller.formatListingFailures = 1;
  // Unlisted this time: the video goes under its kind's name, which this seller's format does not take.
  const first = await reviewDirect({ bytes: mp4Sample(), format: VIDEO_FORMAT, via: fresh });
  expect(first.outcome).toMatchObject({ kind: 'rejected', reasons: [`INVALID_REQUEST: ${VIDEO_SLOT} is required`] });
  expect(Object.keys(first.sent[0]!.creative.assets)).toEqual(['video']);
  const second = await reviewDirect({ bytes: mp4Sample(), format: VIDEO_FORMAT, via: fresh });
  expect(second.outcome).toMatchObject({ kind: 'approved' });
  expect(Object.keys(second.sent[0]!.creative.assets)).toEqual([VIDEO_SLOT]);
  await fresh.close();
}, 60_000);

describe('a review the seller holds to decide later (pending_review)', () => {
  /** Submits the creative and waits until the seller holds it. */
  async function heldAtSeller(org: string) {
    const token = await buyer(org);
    const { creative } = await videoCreative(token, mp4Sample());
    expect((await post(api, token, `/api/v1/creatives/${creative.id}/submit`, { adapterKey: 'adcp-ctl', channel: 'ctv' })).status).toBe(
      202,
    );
    await until('the seller holds the creative', async () => {
      const row = await env.db('creative_reviews').where({ creative_id: creative.id }).first();
      return row?.status === 'at-supplier';
    });
    const review = await env.db('creative_reviews').where({ creative_id: creative.id }).first();
    return { token, creative, review };
  }

  /** One check of every review due, as the workers' poller makes it each interval. */
  async function checkNow() {
    await env
      .db('creative_reviews')
      .where({ status: 'at-supplier' })
      .update({ next_check_at: new Date(Date.now() - 1000) });
    await workers.pollSupplierTasksNow();
  }

  const reviewOf = (id: string) => env.db('creative_reviews').where({ id }).first();

  beforeAll(() => {
    seller.holdCreativesForReview = true;
  });
  afterAll(() => {
    seller.holdCreativesForReview = false;
  });

  test("is asked about on a schedule; the seller's approval, when it comes, is the approval launch needs", async () => {
    await subscribe(env, api, 'org-crt-held-ok', ['creative.review.completed']);
    const { creative, review } = await heldAtSeller('org-crt-held-ok');
    expect(review).toMatchObject({ provider_reference: `${creative.id}-v1` });
    expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(0);

    // Still undecided: it keeps waiting, and earns nothing.
    await checkNow();
    expect(await reviewOf(review.id)).toMatchObject({ status: 'at-supplier', checks: 1 });
    expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(0);

    seller.reviewStatus.set(`${creative.id}-v1`, 'approved');
    await checkNow();
    expect(await reviewOf(review.id)).toMatchObject({ status: 'approved' });
    expect(await env.db('creative_approvals').where({ creative_id: creative.id, adapter_key: 'adcp-ctl' })).toHaveLength(1);
    expect(await env.db('supplier_attempts').where({ id: review.attempt_id }).first('status')).toEqual({ status: 'approved' });
    const events = await env.db('webhook_events').where({ type: 'creative.review.completed', subject_id: review.id });
    expect(events.map((e) => e.body.status)).toEqual(['approved']);
    // Settled once: a later check finds nothing to ask about.
    await checkNow();
    expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(1);
  }, 60_000);

  test("the seller's later rejection rejects it, with no approval", async () => {
    const { creative, review } = await heldAtSeller('org-crt-held-no');
    seller.reviewStatus.set(`${creative.id}-v1`, 'rejected');
    await checkNow();
    const after = await reviewOf(review.id);
    expect(after.status).toBe('rejected');
    expect(after.reasons.join(' ')).toContain('ended rejected');
    expect(await env.db('creative_approvals').where({ creative_id: creative.id })).toHaveLength(0);
  }, 60_000);

  test('a seller that does not decide within ADCP_REVIEW_MAX_WAIT_HOURS hands the review to a person', async () => {
    const { review } = await heldAtSeller('org-crt-held-long');
    await env
      .db('creative_reviews')
      .where({ id: review.id })
      .update({ at_supplier_since: new Date(Date.now() - 8 * 24 * 3_600_000) });
    await checkNow();
    const after = await reviewOf(review.id);
    expect(after.status).toBe('needs-resolution');
    expect(after.reasons[0]).toMatch(/has not decided in 192 hours \(it says pending_review\)/);
  }, 60_000);
});
