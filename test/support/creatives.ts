import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { TestApi } from './api';
import { post } from './bookings';

/** Small files whose signatures are real: enough for content sniffing, distinct bytes every call. */
export const SAMPLE = {
  'image/png': () => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]),
  'video/mp4': () => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(64)]),
  'audio/mpeg': () => Buffer.concat([Buffer.from('ID3'), randomBytes(64)]),
} as const;

export const MEDIA_FOR: Record<string, keyof typeof SAMPLE> = {
  ctv: 'video/mp4',
  tv: 'video/mp4',
  cinema: 'video/mp4',
  audio: 'audio/mpeg',
  dooh: 'image/png',
  social: 'image/png',
  search: 'image/png',
};

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
  const body = {
    name: `${channel} spot`,
    channel,
    format: channel === 'audio' ? 'audio-30s' : 'video-30s',
    assetUrl: asset.url,
    copyText: 'Refreshingly simple.',
    ...(channel === 'audio'
      ? {
          audioDelivery: {
            tagline: 'Taste it',
            destinationUrl: 'https://acme.example/drinks',
            callToAction: 'Visit us',
            language: 'en-GB',
          },
        }
      : {}),
    ...over,
  };
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
