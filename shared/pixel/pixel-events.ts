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

export interface RecordedPageview {
  id: string;
  replayed: boolean;
}

/**
 * Records an anonymous pageview. With an idempotency key, the first event for the pixel
 * and key is kept: a replay, even with a changed body, returns it and changes nothing.
 */
export async function recordPageview(
  db: Knex,
  input: { advertiserId: string; pixelKey: string; idempotencyKey?: string; event: PixelEvent },
): Promise<RecordedPageview> {
  const row = {
    advertiser_id: input.advertiserId,
    pixel_key: input.pixelKey,
    idempotency_key: input.idempotencyKey ?? null,
    kind: input.event.kind ?? null,
    event: input.event.event ?? null,
    value: input.event.value ?? null,
    value_minor: input.event.valueMinor ?? null,
    promo_code: input.event.promoCode ?? null,
  };
  if (!input.idempotencyKey) {
    const [created] = await db('pixel_events').insert(row).returning('id');
    return { id: String(created.id), replayed: false };
  }
  const inserted = await db.raw(
    `insert into pixel_events (advertiser_id, pixel_key, idempotency_key, kind, event, value, value_minor, promo_code)
     values (:advertiser_id, :pixel_key, :idempotency_key, :kind, :event, :value, :value_minor, :promo_code)
     on conflict (pixel_key, idempotency_key) where idempotency_key is not null do nothing
     returning id`,
    row,
  );
  if (inserted.rows[0]) return { id: String(inserted.rows[0].id), replayed: false };
  const first = await db('pixel_events').where({ pixel_key: input.pixelKey, idempotency_key: input.idempotencyKey }).first('id');
  return { id: String(first.id), replayed: true };
}
