import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secret-box';
import { conflict, notFound } from '../errors';
import { checkWebhookUrl, type UrlPolicy } from './url-safety';
import type { CreateSubscription, Subscription, UpdateSubscription } from './subscription-schemas';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

interface SubscriptionRow {
  id: string;
  workspace_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function subscriptionView(r: SubscriptionRow, now = new Date()): Subscription {
  const overlap = r.previous_secret_expires_at && r.previous_secret_expires_at > now ? r.previous_secret_expires_at : null;
  return {
    id: r.id,
    url: r.url,
    eventTypes: r.event_types as Subscription['eventTypes'],
    description: r.description,
    enabled: r.enabled,
    status: !r.enabled ? 'disabled' : r.failing_since ? 'failing' : 'active',
    failingSince: iso(r.failing_since),
    previousSecretExpiresAt: iso(overlap),
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export async function createSubscription(
  db: Knex,
  workspaceId: string,
  createdBy: string,
  input: CreateSubscription,
  policy: UrlPolicy,
  secrets: SecretBox,
): Promise<{ subscription: Subscription; secret: string }> {
  const url = checkWebhookUrl(input.url, policy).toString();
  const secret = newSecret();
  const [row] = await db('webhook_subscriptions')
    .insert({
      id: randomUUID(),
      workspace_id: workspaceId,
      url,
      event_types: input.eventTypes,
      description: input.description ?? null,
      // Shown once to the subscriber; kept only sealed.
      secret: secrets.seal(secret),
      created_by: createdBy,
    })
    .returning('*');
  return { subscription: subscriptionView(row as SubscriptionRow), secret };
}

export async function listSubscriptions(db: Knex, workspaceId: string): Promise<Subscription[]> {
  const rows: SubscriptionRow[] = await db('webhook_subscriptions')
    .where({ workspace_id: workspaceId })
    .orderBy('created_at', 'desc')
    .limit(200);
  return rows.map((r) => subscriptionView(r));
}

/** The workspace's subscription, or 404 (another workspace's is as absent as an unknown one). */
export async function findSubscription(db: Knex, workspaceId: string, id: string): Promise<SubscriptionRow> {
  const row: SubscriptionRow | undefined = await db('webhook_subscriptions').where({ id, workspace_id: workspaceId }).first();
  if (!row) throw notFound();
  return row;
}

export async function updateSubscription(
  db: Knex,
  workspaceId: string,
  id: string,
  input: UpdateSubscription,
  policy: UrlPolicy,
): Promise<Subscription> {
  const patch: Record<string, unknown> = {};
  if (input.url !== undefined) patch.url = checkWebhookUrl(input.url, policy).toString();
  if (input.eventTypes !== undefined) patch.event_types = input.eventTypes;
  if (input.description !== undefined) patch.description = input.description;
  if (input.enabled !== undefined) patch.enabled = input.enabled;
  return db.transaction(async (trx) => {
    const current = await trx('webhook_subscriptions').where({ id, workspace_id: workspaceId }).forNoKeyUpdate().first('version');
    if (!current) throw notFound();
    if (input.expectedVersion !== undefined && input.expectedVersion !== current.version) {
      throw conflict(`The subscription is at version ${current.version}, not ${input.expectedVersion}.`, 'version_conflict');
    }
    // Nothing named: nothing changes, and the version stays.
    if (!Object.keys(patch).length) return subscriptionView(await trx('webhook_subscriptions').where({ id }).first());
    const [row] = await trx('webhook_subscriptions')
      .where({ id })
      .update({ ...patch, version: trx.raw('version + 1'), updated_at: trx.fn.now() })
      .returning('*');
    return subscriptionView(row as SubscriptionRow);
  });
}

/** A new secret; the previous one keeps signing (a second signature) for the overlap. */
export async function rotateSecret(
  db: Knex,
  workspaceId: string,
  id: string,
  overlapHours: number,
  secrets: SecretBox,
): Promise<{ subscription: Subscription; secret: string }> {
  const secret = newSecret();
  const [row] = await db('webhook_subscriptions')
    .where({ id, workspace_id: workspaceId })
    .update({
      previous_secret: db.ref('secret'),
      previous_secret_expires_at: db.raw(`now() + make_interval(hours => ?)`, [overlapHours]),
      secret: secrets.seal(secret),
      version: db.raw('version + 1'),
      updated_at: db.fn.now(),
    })
    .returning('*');
  if (!row) throw notFound();
  return { subscription: subscriptionView(row as SubscriptionRow), secret };
}

/** Removes the subscription and its deliveries' record. */
export async function deleteSubscription(db: Knex, workspaceId: string, id: string): Promise<void> {
  const n = await db('webhook_subscriptions').where({ id, workspace_id: workspaceId }).delete();
  if (!n) throw notFound();
}

/** Subscriptions of these workspaces whose deliveries used up every retry, for the console, longest failing first. */
export async function failingSubscriptions(db: Knex, workspaceIds: readonly string[], limit = 100) {
  if (!workspaceIds.length) return [];
  const rows: SubscriptionRow[] = await db('webhook_subscriptions')
    .whereIn('workspace_id', workspaceIds)
    .whereNotNull('failing_since')
    .andWhere({ enabled: true })
    .orderBy('failing_since')
    .limit(limit);
  return rows.map((r) => ({ workspaceId: r.workspace_id, ...subscriptionView(r) }));
}

/**
 * Seals, under the current SECRETS_KEY, every stored secret that is not: those kept in clear
 * before sealing began, and those sealed under a key SECRETS_KEY replaced. Run once the schema is
 * migrated, at every start (it finds nothing after the first). Each row is changed only if it
 * still holds what was read, so a rotation meanwhile is never undone.
 */
export async function sealStoredSecrets(db: Knex, secrets: SecretBox): Promise<number> {
  const current = `sealed:v1:${secrets.keyId}:%`;
  const rows: Array<Pick<SubscriptionRow, 'id' | 'secret' | 'previous_secret'>> = await db('webhook_subscriptions')
    .where((q) =>
      q.whereNot('secret', 'like', current).orWhere((p) => p.whereNotNull('previous_secret').whereNot('previous_secret', 'like', current)),
    )
    .select('id', 'secret', 'previous_secret');
  let sealed = 0;
  for (const r of rows) {
    const seal = (v: string | null) => (v === null || secrets.isCurrent(v) ? v : secrets.seal(secrets.open(v)));
    sealed += await db('webhook_subscriptions')
      .where({ id: r.id, secret: r.secret })
      .andWhere((q) => (r.previous_secret === null ? q.whereNull('previous_secret') : q.where('previous_secret', r.previous_secret)))
      .update({ secret: seal(r.secret), previous_secret: seal(r.previous_secret) });
  }
  return sealed;
}
