import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../actor';

export interface EventInput {
  bookingId: string;
  lineId?: string | null;
  action: string;
  actor: Actor;
  detail?: unknown;
}

export async function appendEvent(trx: Knex, e: EventInput): Promise<void> {
  await trx('booking_events').insert({
    id: randomUUID(),
    booking_id: e.bookingId,
    line_id: e.lineId ?? null,
    action: e.action,
    actor_id: e.actor.actorId,
    actor: e.actor.actor,
    source: e.actor.source,
    detail: e.detail === undefined ? null : JSON.stringify(e.detail),
  });
}
