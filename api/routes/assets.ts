import { z } from 'zod';
import { uploadAsset } from '../../shared/assets/upload';
import { ASSET_TYPES } from '../../shared/assets/asset-store';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';

const AssetEnvelope = z
  .object({
    asset: z.object({ name: z.string(), url: z.string(), fingerprint: z.string(), contentType: z.string(), sizeBytes: z.number().int() }),
  })
  .meta({ id: 'AssetEnvelope' });

const Bytes = z.custom<Buffer>((v) => Buffer.isBuffer(v) && v.length > 0, 'send the file bytes as the request body');

export function assetRoutes({ assets, config }: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/assets',
      operationId: 'uploadAsset',
      summary:
        'Upload creative bytes (human only), sent with their own media type (image/png, video/mp4, …; not application/octet-stream). Stored content-addressed; returns the /files/assets URL and the sha256 fingerprint.',
      tags: ['assets'],
      access: 'bearer',
      scope: 'caller',
      body: Bytes,
      rawBody: true,
      // The media types the store accepts; the bytes must be what the type says.
      rawBodyTypes: Object.keys(ASSET_TYPES),
      bodyLimitBytes: config.ASSET_MAX_BYTES,
      responses: {
        201: { description: 'Stored.', schema: AssetEnvelope },
        403: { description: 'Delegated agents cannot upload.' },
        413: { description: 'Larger than ASSET_MAX_BYTES.' },
      },
      async handler({ principal, body, headers }) {
        const asset = await uploadAsset(assets, principal, body, headers['content-type']);
        return { status: 201, body: { asset }, headers: { location: asset.url } };
      },
    }),
  ];
}
