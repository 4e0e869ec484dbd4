import type { Knex } from 'knex';
import { z } from 'zod';

/** Named pixel fields; anything else a page sends is accepted and dropped. */
export const PixelEventSchema = z
  .object({
    kind: z.string().max(64).optional(),
    event: z.string().max(64).optional(),
    value: z.number().min(0).max(21474836.47).optional(),
    valueMinor: z.number().int().min(0).max(2147483647).optional(),
    promoCode: z.string().max(64).optional(),
  })
  .strip();
export type PixelEvent = z.infer<typeof PixelEventSchema>;

export const PixelIdempotencyKeySchema = z.string().min(8).max(200);

/** A pageview as accepted: which workspace and pixel, the key it came with, what it said. */
export interface AcceptedPageview {
  advertiserId: string;
  pixelKey: string;
  idempotencyKey?: string;
  event: PixelEvent;
}

/** A text field PostgreSQL could not store; refused when accepted, since the write comes later. */
export const hasUnstorableText = (event: PixelEvent): boolean =>
  [event.kind, event.event, event.promoCode].some((s) => s !== undefined && s.includes('\u0000'));

/** An accepted pageview with the stream entry it was accepted as, and when. */
export interface StreamedPageview extends AcceptedPageview {
  streamId: string;
  receivedAt: Date;
}

const rowOf = (p: StreamedPageview) => ({
  stream_id: p.streamId,
  advertiser_id: p.advertiserId,
  pixel_key: p.pixelKey,
  idempotency_key: p.idempotencyKey ?? null,
  kind: p.event.kind ?? null,
  event: p.event.event ?? null,
  value: p.event.value ?? null,
  value_minor: p.event.valueMinor ?? null,
  promo_code: p.event.promoCode ?? null,
  received_at: p.receivedAt,
});

// The batch travels as one JSON parameter rather than ten per row: building and binding
// thousands of parameters cost more than the insert itself.
const INSERT_BATCH = `
insert into pixel_events (stream_id, advertiser_id, pixel_key, idempotency_key, kind, event, value, value_minor, promo_code, received_at)
select r->>'stream_id', r->>'advertiser_id', r->>'pixel_key', r->>'idempotency_key', r->>'kind', r->>'event',
       (r->>'value')::numeric, (r->>'value_minor')::bigint, r->>'promo_code', (r->>'received_at')::timestamptz
  from jsonb_array_elements(?::jsonb) with ordinality as batch(r, n)
 order by n
on conflict do nothing
returning id`;

/**
 * Stores pageviews in one statement, in stream order. Conflicts are skipped, whichever unique
 * index they meet: a stream entry already written (a batch written again after a crash before
 * its acknowledgement) or a pixel and idempotency key already used (the first event is kept).
 * Returns how many rows were added.
 */
export async function storePageviews(db: Knex, pageviews: StreamedPageview[]): Promise<number> {
  if (!pageviews.length) return 0;
  const { rows } = (await db.raw(INSERT_BATCH, [JSON.stringify(pageviews.map(rowOf))])) as { rows: unknown[] };
  return rows.length;
}
