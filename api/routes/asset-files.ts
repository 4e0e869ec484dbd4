import fs from 'node:fs';
import { z } from 'zod';
import { notFound } from '../../shared/errors';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';

const Params = z.strictObject({ name: z.string().min(1) });

export function assetFileRoutes({ assets }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/files/assets/:name',
      operationId: 'getAssetFile',
      summary: 'The bytes of a stored asset, by its content-addressed name.',
      tags: ['assets'],
      access: 'public',
      params: Params,
      responses: {
        200: { description: 'The file; any content type.', contentType: '*/*', schema: z.string().meta({ format: 'binary' }) },
        304: { description: 'Not modified (If-None-Match matched the ETag).' },
        404: { description: 'No stored asset has that name.' },
      },
      async handler({ params, req, res }) {
        // Only content-addressed names resolve, so "../" and friends can never reach the disk.
        const file = await assets.find(params.name);
        if (!file) throw notFound();
        const stat = await fs.promises.stat(file.path).catch(() => null);
        if (!stat) throw notFound();
        const etag = `"sha256-${file.sha256}"`;
        res.setHeader('etag', etag);
        // The name is the content's hash: it can never change, so caches may keep it forever.
        res.setHeader('cache-control', 'public, max-age=31536000, immutable');
        res.setHeader('x-content-type-options', 'nosniff');
        res.setHeader('content-security-policy', "default-src 'none'; sandbox");
        res.setHeader('cross-origin-resource-policy', 'cross-origin');
        const inm = req.headers['if-none-match'];
        if (inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
          res.status(304).end();
          return;
        }
        res.setHeader('content-type', file.contentType);
        res.setHeader('content-length', String(stat.size));
        res.status(200);
        if (req.method === 'HEAD') {
          res.end();
          return;
        }
        await new Promise<void>((resolve, reject) => {
          const stream = fs.createReadStream(file.path);
          stream.on('error', reject);
          res.on('finish', resolve);
          res.on('close', resolve);
          stream.pipe(res);
        });
      },
    }),
  ];
}
