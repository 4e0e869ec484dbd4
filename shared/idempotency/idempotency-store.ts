import type { Knex } from 'knex';
import { conflict } from '../errors';

export interface StoredResponse {
  status: number;
  /** The body exactly as sent (JSON text), or null when there was none: a replay sends these bytes. */
  json: string | null;
}

/** A first request still unfinished after this long is taken to have died. */
const STUCK_AFTER_MS = 5 * 60 * 1000;

export type Claim = { kind: 'run'; recordId: string } | { kind: 'replay'; response: StoredResponse };

/**
 * Policy `required`: records are scoped by tenant, caller and route. The first request with a
 * key runs; the same key and body replays its response (errors included); a different body,
 * or a request while the first is still running, is a 409. A transient failure is not an
 * answer: its record is released, so that the client's retry with the same key runs.
 */
export async function claimIdempotencyKey(
  db: Knex,
  scope: { advertiserId: string; callerId: string; route: string },
  key: string,
  requestDigest: string,
): Promise<Claim> {
  const inserted = await db.raw(
    `insert into idempotency_records (advertiser_id, caller_id, route, idempotency_key, request_digest)
     values (?, ?, ?, ?, ?)
     on conflict (advertiser_id, caller_id, route, idempotency_key) do nothing
     returning id`,
    [scope.advertiserId, scope.callerId, scope.route, key, requestDigest],
  );
  if (inserted.rows[0]) return { kind: 'run', recordId: String(inserted.rows[0].id) };
  const existing = await db('idempotency_records')
    .where({ advertiser_id: scope.advertiserId, caller_id: scope.callerId, route: scope.route, idempotency_key: key })
    .first();
  if (existing.request_digest !== requestDigest) {
    throw conflict('This Idempotency-Key was used with a different request. Use a new key for a new request.', 'idempotency_conflict');
  }
  if (existing.state !== 'completed' && Date.now() - (existing.created_at as Date).getTime() > STUCK_AFTER_MS) {
    // The first request died mid-flight: what it did is unknown, so it is never re-run under this key.
    throw conflict(
      'The first request with this Idempotency-Key never finished; its outcome is unknown. Inspect state, then retry with a new key.',
      'idempotency_outcome_unknown',
      'terminal',
    );
  }
  if (existing.state !== 'completed') {
    throw conflict(
      'The first request with this Idempotency-Key is still running. Retry with the same key shortly.',
      'idempotency_in_flight',
      'transient',
    );
  }
  return { kind: 'replay', response: { status: existing.response_status, json: existing.response_body } };
}

export async function completeIdempotencyKey(db: Knex, recordId: string, response: StoredResponse): Promise<void> {
  await db('idempotency_records').where({ id: recordId }).update({
    state: 'completed',
    response_status: response.status,
    response_body: response.json,
    completed_at: db.fn.now(),
  });
}

/** Forgets an unfinished claim, so that the next request with this key runs as if it were the first. */
export async function releaseIdempotencyKey(db: Knex, recordId: string): Promise<void> {
  await db('idempotency_records').where({ id: recordId }).whereNot({ state: 'completed' }).delete();
}
