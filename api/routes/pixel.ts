import { z } from 'zod';
import { notFound } from '../../shared/errors';
import { invalidText } from '../../shared/db/db-errors';
import { PixelEventSchema, PixelIdempotencyKeySchema, hasUnstorableText } from '../../shared/pixel/pixel-events';
import { acceptPageview } from '../../shared/pixel/pixel-stream';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { parsePart } from '../http/validate';

const Params = z.strictObject({ pixelKey: z.string().min(1).max(128) });
const Headers = z.object({ 'idempotency-key': PixelIdempotencyKeySchema.optional() });
const Accepted = z.object({ accepted: z.literal(true), replayed: z.boolean() }).meta({ id: 'PixelAccepted' });

export function pixelRoutes({ redis, redisPrefix, workspaces }: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/t/:pixelKey',
      operationId: 'trackPageview',
      // Every pageview of every advertiser site.
      lean: true,
      summary: 'Record an anonymous pageview. Cannot assert conversions, revenue or identity.',
      tags: ['tracking'],
      access: 'public',
      params: Params,
      headers: Headers,
      idempotency: 'optional',
      body: PixelEventSchema.optional(),
      // Browsers' sendBeacon posts text/plain; the body is still JSON.
      extraBodyTypes: ['text/plain'],
      bodyLimitBytes: 16 * 1024,
      responses: {
        202: {
          description:
            'Accepted once durably queued (or, for a replayed Idempotency-Key, the first event kept). Readable within seconds; later while the database is unavailable, never lost.',
          schema: Accepted,
        },
        404: { description: 'Unknown pixel key.' },
      },
      async handler({ params, body, headers, res }) {
        res.setHeader('access-control-allow-origin', '*');
        const { 'idempotency-key': idempotencyKey } = parsePart(Headers, headers, 'headers');
        const workspace = await workspaces.findByPixelKey(params.pixelKey);
        if (!workspace) throw notFound();
        const event = body ?? {};
        // Stored later, so refused now: a row PostgreSQL cannot take must never be acknowledged.
        if (hasUnstorableText(event)) throw invalidText();
        const { replayed } = await acceptPageview(redis, redisPrefix, {
          advertiserId: workspace.id,
          pixelKey: params.pixelKey,
          event,
          ...(idempotencyKey ? { idempotencyKey } : {}),
        });
        return { status: 202, body: { accepted: true, replayed } };
      },
    }),
  ];
}
