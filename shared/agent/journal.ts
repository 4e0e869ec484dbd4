import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Principal } from '../auth/principal';

const SECRET_KEY = /(secret|token|password|passphrase|api[-_]?key|private[-_]?key|credential|authorization|cookie)/i;
const LARGE_STRING = 1024;

const digestValue = (v: unknown) => {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return { digest: `sha256:${createHash('sha256').update(text).digest('hex')}`, bytes: Buffer.byteLength(text) };
};

/** Secrets and large payloads are kept as their digests, so the journal proves what was prepared without holding it. */
export function redactForJournal(value: unknown, key = ''): unknown {
  if (key && SECRET_KEY.test(key)) return digestValue(value);
  if (typeof value === 'string') return value.length > LARGE_STRING ? digestValue(value) : value;
  if (Array.isArray(value)) return value.map((v) => redactForJournal(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactForJournal(v, k)]));
  }
  return value;
}

/**
 * `by` is the caller whose request caused the entry: it records a person or an agent, and
 * the door they came through: the REST API (`api`), the agent endpoint (`mcp`) or the console.
 */
export async function journal(
  trx: Knex,
  e: { advertiserId: string; runId: string; approvalId?: string | null; type: string; entry: unknown; actorId: string; by: Principal },
): Promise<void> {
  await trx('mission_journal').insert({
    advertiser_id: e.advertiserId,
    run_id: e.runId,
    approval_id: e.approvalId ?? null,
    entry_type: e.type,
    entry: JSON.stringify(redactForJournal(e.entry)),
    actor_id: e.actorId,
    actor: e.by.agentClientId ? 'agent' : 'human',
    source: e.by.via ?? 'api',
  });
}
