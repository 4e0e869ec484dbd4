import type { Knex } from 'knex';
import type { ReplayInsertResult, ReplayStore, RequestLike } from '@adcp/sdk/signing/server';
import type { SecretBox } from '../../crypto/secret-box';
import { webhookAuthOf } from '../../config/adcp-sellers';
import { WEBHOOK_WINDOW_SECONDS, checkBearer, checkHmac, storedWebhookSecret } from './webhook-auth';
import { adcpSigning } from './sdk';
import type { OperationTaskOutcome, TaskOutcome } from '../adapter';
import type { AdcpSellerConnection } from './connection';
import { taskVerdict, updateTaskVerdict } from './outcomes';

/** Where a seller pushes the outcome of a booking it finishes later: one path per seller. */
export const webhookPath = (adapterKey: string) => `/api/v1/adapters/${adapterKey}/webhooks`;

/**
 * The nonces of verified webhook signatures, in PostgreSQL so that every API process refuses a
 * replay; a row lives until its signature's window has passed. `insert` is one statement: of two
 * deliveries of the same signature at once, exactly one inserts.
 */
export function pgReplayStore(db: Knex, capPerKey = 100_000): ReplayStore {
  const at = (seconds: number) => new Date(seconds * 1000);
  return {
    async has(keyid, scope, nonce, now) {
      return !!(await db('adcp_webhook_nonces').where({ keyid, scope, nonce }).where('expires_at', '>', at(now)).first('nonce'));
    },
    async isCapHit(keyid, scope, now) {
      const [row] = await db('adcp_webhook_nonces').where({ keyid, scope }).where('expires_at', '>', at(now)).count('* as n');
      return Number(row?.n ?? 0) >= capPerKey;
    },
    async insert(keyid, scope, nonce, ttlSeconds, now): Promise<ReplayInsertResult> {
      // The key's expired nonces go as it signs new ones, so the table holds about one window's worth.
      await db('adcp_webhook_nonces').where({ keyid, scope }).where('expires_at', '<=', at(now)).delete();
      // An expired row for the same nonce is reused; a live one means the signature was seen.
      const { rows } = await db.raw<{ rows: unknown[] }>(
        `insert into adcp_webhook_nonces (keyid, scope, nonce, expires_at) values (?, ?, ?, ?)
         on conflict (keyid, scope, nonce) do update set expires_at = excluded.expires_at
           where adcp_webhook_nonces.expires_at <= ?
         returning 1`,
        [keyid, scope, nonce, at(now + ttlSeconds), at(now)],
      );
      return rows.length ? 'ok' : 'replayed';
    },
  };
}

/** Why a webhook was refused: its signature (401), or a body that is no task's outcome (400). */
export class WebhookRefused extends Error {
  override readonly name = 'WebhookRefused';
  constructor(
    readonly status: 400 | 401,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface TaskPayload {
  task_id?: unknown;
  task_type?: unknown;
  status?: unknown;
  result?: unknown;
  message?: unknown;
}

/** A verified webhook: the task (a booking's or an in-flight change's) it answers and the outcome it carries, or nothing of ours. */
export type VerifiedWebhook =
  | { kind: 'task-outcome'; taskId: string; outcome: TaskOutcome | OperationTaskOutcome | { kind: 'unknown'; cause: string } }
  | { kind: 'not-ours' };

export interface ReceiverOptions {
  allowPrivateJwks: boolean;
  /** Opens the secrets issued to sellers that authenticate the legacy way (HMAC-SHA256, bearer). */
  secrets: SecretBox;
  /** Now, in seconds (tests pin it to a signature's own time). */
  now?: () => number;
  /** How many live nonces one key may hold before its webhooks are refused as abuse. */
  replayCapPerKey?: number;
}

/**
 * A seller's webhooks, authenticated as the seller is configured to (`webhookAuth`): RFC 9421,
 * the AdCP webhook profile, verified by the SDK's verifier against the keys the seller publishes;
 * or AdCP 3.0's legacy HMAC-SHA256 or bearer token with the secret issued to it. Under every
 * scheme an unsigned, wrongly signed, stale or replayed webhook is refused, and one signed
 * another way than the seller's is refused as a mode mismatch. A verified task outcome is read
 * as a poll's answer would be (taskVerdict, updateTaskVerdict), for the caller to settle its
 * pending booking or change with.
 */
export class AdcpWebhookReceiver {
  private readonly verifiers = new Map<string, (request: RequestLike) => Promise<unknown>>();
  private readonly replays: ReplayStore;

  constructor(
    private readonly db: Knex,
    private readonly opts: ReceiverOptions,
  ) {
    this.replays = pgReplayStore(db, opts.replayCapPerKey);
  }

  private now = () => this.opts.now?.() ?? Math.floor(Date.now() / 1000);

  private async verifierFor(connection: AdcpSellerConnection) {
    let verify = this.verifiers.get(connection.adapterKey);
    if (!verify) {
      const { HttpsJwksResolver, HttpsRevocationStore, createWebhookVerifier } = await adcpSigning();
      const { webhookJwksUrl, webhookRevocationUrl } = connection.seller;
      const allowPrivateIp = this.opts.allowPrivateJwks;
      const clock = this.opts.now ? { now: this.opts.now } : {};
      verify = createWebhookVerifier({
        jwks: new HttpsJwksResolver(webhookJwksUrl!, { allowPrivateIp }),
        replayStore: this.replays,
        ...clock,
        ...(webhookRevocationUrl ? { revocationStore: new HttpsRevocationStore(webhookRevocationUrl, { allowPrivateIp, ...clock }) } : {}),
      });
      this.verifiers.set(connection.adapterKey, verify);
    }
    return verify;
  }

  /** Checks the webhook's authentication under the seller's scheme; throws WebhookRefused (401) when it must be refused. */
  private async authenticate(connection: AdcpSellerConnection, request: RequestLike): Promise<void> {
    const scheme = webhookAuthOf(connection.seller);
    if (scheme === 'rfc9421') {
      const headers = request.headers as Record<string, unknown>;
      if (headers['x-adcp-signature'] !== undefined || (headers.authorization !== undefined && headers['signature-input'] === undefined)) {
        throw new WebhookRefused(401, 'webhook_mode_mismatch', 'The seller is registered to sign webhooks with RFC 9421; this one is not.');
      }
      const { WebhookSignatureError } = await adcpSigning();
      try {
        await (
          await this.verifierFor(connection)
        )(request);
      } catch (err) {
        if (err instanceof WebhookSignatureError)
          throw new WebhookRefused(401, err.code, `The webhook's signature was refused: ${err.message}`);
        throw err;
      }
      return;
    }
    if (!scheme) throw new WebhookRefused(401, 'webhook_not_expected', 'The seller pushes no webhooks here.');
    const secret = await storedWebhookSecret(this.db, this.opts.secrets, connection.adapterKey, scheme);
    if (!secret) throw new WebhookRefused(401, 'webhook_signature_key_unknown', 'No secret was issued to the seller for its webhooks.');
    const headers = request.headers as Record<string, string | string[] | undefined>;
    const body = request.body ?? '';
    const now = this.now();
    const check = scheme === 'hmac-sha256' ? checkHmac(headers, body, secret, now) : checkBearer(headers, body, secret, now);
    if ('refused' in check) throw new WebhookRefused(401, check.refused.code, check.refused.message);
    const seen = await this.replays.insert(`${scheme}:${connection.adapterKey}`, 'webhook', check.nonce, 2 * WEBHOOK_WINDOW_SECONDS, now);
    if (seen !== 'ok') throw new WebhookRefused(401, 'webhook_signature_replayed', 'The webhook was delivered before.');
  }

  /** Authenticates and reads. Throws WebhookRefused, having changed nothing but the nonce, when it must be refused. */
  async receive(connection: AdcpSellerConnection, request: RequestLike): Promise<VerifiedWebhook> {
    await this.authenticate(connection, request);
    let payload: TaskPayload;
    try {
      payload = JSON.parse(request.body ?? '') as TaskPayload;
    } catch {
      throw new WebhookRefused(400, 'webhook_body_invalid', 'The webhook body is not JSON.');
    }
    if (typeof payload !== 'object' || payload === null || typeof payload.task_id !== 'string' || typeof payload.status !== 'string') {
      throw new WebhookRefused(400, 'webhook_body_invalid', 'The webhook names no task and status.');
    }
    // Only bookings and in-flight changes wait on a task; a seller's other notices settle nothing.
    const verdict =
      payload.task_type === 'create_media_buy' ? taskVerdict : payload.task_type === 'update_media_buy' ? updateTaskVerdict : null;
    if (!verdict) return { kind: 'not-ours' };
    const message = typeof payload.message === 'string' ? payload.message : undefined;
    const outcome = verdict({
      status: payload.status,
      result: payload.result,
      taskId: payload.task_id,
      ...(message ? { message, error: message } : {}),
    }) ?? { kind: 'unknown', cause: `The seller reports task ${payload.task_id} as ${payload.status}.` };
    return { kind: 'task-outcome', taskId: payload.task_id, outcome };
  }
}
