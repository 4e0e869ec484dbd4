import type { Knex } from 'knex';
import { subjectTypeOf, type EventType } from './catalogue';

/** A change worth telling subscribers about: what changed, in which workspace, and its new version. */
export interface EventInput {
  workspaceId: string;
  type: EventType;
  subjectId: string;
  /** The subject's version after the change: receivers order and deduplicate by it. */
  subjectVersion: number;
  /** Ids and states only: never personal data, secrets or tokens. */
  body: Record<string, string | number | boolean | null>;
}

/**
 * Records an event in the caller's transaction: the event, a delivery for every subscription that
 * wants it, and their outbox rows, by the database function `webhook_record` (the one place fan-out
 * is decided; booking events reach it by trigger). Call it in the transaction that makes the change,
 * after the change, so the event exists exactly when the change does. Null, and nothing stored,
 * when no enabled subscription of the workspace wants the type: events are read only through
 * their deliveries.
 */
export async function recordEvent(trx: Knex, e: EventInput): Promise<string | null> {
  const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>('select webhook_record(?, ?, ?, ?, ?, ?::jsonb) as id', [
    e.workspaceId,
    e.type,
    subjectTypeOf(e.type),
    e.subjectId,
    e.subjectVersion,
    JSON.stringify(e.body),
  ]);
  return rows[0]!.id;
}
