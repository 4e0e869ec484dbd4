import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../auth/actor';

export interface EventInput {
  bookingId: string;
  lineId?: string | null;
  action: string;
  actor: Actor;
  detail?: unknown;
}

const INTO = 'insert into booking_events (id, booking_id, line_id, action, actor_id, actor, source, detail) values ';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?)';

/** The event row as one INSERT with `?` placeholders for `eventValues`, to embed in a larger statement. */
export const EVENT_INSERT = INTO + ROW;

/** The event as the row it is stored as, with a fresh id. */
export const eventRow = (e: EventInput) => ({
  id: randomUUID(),
  booking_id: e.bookingId,
  line_id: e.lineId ?? null,
  action: e.action,
  actor_id: e.actor.actorId,
  actor: e.actor.actor,
  source: e.actor.source,
  detail: e.detail === undefined ? null : JSON.stringify(e.detail),
});

export const eventValues = (e: EventInput): Knex.Value[] => {
  const r = eventRow(e);
  return [r.id, r.booking_id, r.line_id, r.action, r.actor_id, r.actor, r.source, r.detail];
};

export async function appendEvent(trx: Knex, e: EventInput): Promise<void> {
  await trx.raw(EVENT_INSERT, eventValues(e));
}
