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

const INTO = 'insert into booking_events (id, booking_id, line_id, action, actor_id, actor, source, detail) values ';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?)';

/** The event row as one INSERT with `?` placeholders for `eventValues`, to embed in a larger statement. */
export const EVENT_INSERT = INTO + ROW;

export const eventValues = (e: EventInput): Knex.Value[] => [
  randomUUID(),
  e.bookingId,
  e.lineId ?? null,
  e.action,
  e.actor.actorId,
  e.actor.actor,
  e.actor.source,
  e.detail === undefined ? null : JSON.stringify(e.detail),
];

export async function appendEvent(trx: Knex, e: EventInput): Promise<void> {
  await trx.raw(EVENT_INSERT, eventValues(e));
}

/** Several events in one INSERT, in the order given; returns the rows written. */
export async function appendEvents(trx: Knex, events: readonly EventInput[]): Promise<Array<Record<string, unknown>>> {
  if (!events.length) return [];
  const { rows } = await trx.raw<{ rows: Array<Record<string, unknown>> }>(
    `${INTO}${events.map(() => ROW).join(', ')} returning *`,
    events.flatMap(eventValues),
  );
  return rows;
}
