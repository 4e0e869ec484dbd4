import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { TestApi } from './api';
import { post } from './bookings';
import { MEDIA_FOR, SAMPLE, creativeBody } from './creative-samples';

export { MEDIA_FOR, SAMPLE };

export async function upload(api: TestApi, token: string, contentType: keyof typeof SAMPLE, bytes = SAMPLE[contentType]()) {
  const res = await api.fetch('/api/v1/assets', { method: 'POST', token, headers: { 'content-type': contentType }, body: bytes });
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { asset: { url: string; fingerprint: string; name: string } }).asset;
}

export interface CreativeBody {
  id: string;
  version: number;
  assetFingerprint: string;
  metadataDigest: string;
  reviewState: string;
  approvals: Array<{ adapterKey: string; version: number }>;
  [k: string]: unknown;
}

/** Uploads suitable bytes for the channel and creates a creative over them. */
export async function makeCreative(
  api: TestApi,
  token: string,
  channel: string,
  over: Record<string, unknown> = {},
): Promise<CreativeBody> {
  const asset = await upload(api, token, MEDIA_FOR[channel]!);
  const body = creativeBody(channel, asset.url, over);
  const res = await post(api, token, '/api/v1/creatives', body);
  if (res.status !== 201) throw new Error(`creative failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { creative: CreativeBody }).creative;
}

/** A creative that a supplier approved, as its review would have recorded (live suppliers are not connected in tests). */
export async function approvedCreative(api: TestApi, db: Knex, token: string, adapterKey = 'live-ctv'): Promise<string> {
  const c = await makeCreative(api, token, 'ctv');
  await db('creative_approvals').insert({
    id: randomUUID(),
    creative_id: c.id,
    version: c.version,
    adapter_key: adapterKey,
    asset_fingerprint: c.assetFingerprint,
    metadata_digest: c.metadataDigest,
    review_id: randomUUID(),
  });
  return c.id;
}
