import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { SecretBox } from '../../crypto/secret-box';
import type { WebhookAuthScheme } from '../../config/adcp-sellers';

/** A legacy scheme: the seller authenticates with a secret this service issued it. */
export type SharedSecretScheme = Exclude<WebhookAuthScheme, 'rfc9421'>;

/**
 * The secret issued to the seller for its webhooks under `scheme`: made once (concurrent first
 * uses agree on one row) and kept sealed. A seller whose scheme changed is issued a new one.
 */
export async function issuedWebhookSecret(db: Knex, box: SecretBox, adapterKey: string, scheme: SharedSecretScheme): Promise<string> {
  const fresh = box.seal(randomBytes(32).toString('base64url'));
  const { rows } = await db.raw<{ rows: Array<{ secret: string }> }>(
    `insert into adcp_webhook_secrets (adapter_key, scheme, secret) values (?, ?, ?)
     on conflict (adapter_key) do update set scheme = excluded.scheme, secret = excluded.secret, created_at = now()
       where adcp_webhook_secrets.scheme <> excluded.scheme
     returning secret`,
    [adapterKey, scheme, fresh],
  );
  const stored =
    rows[0]?.secret ?? ((await db('adcp_webhook_secrets').where({ adapter_key: adapterKey }).first('secret')) as { secret: string }).secret;
  return box.open(stored);
}

/** The secret kept for the seller's webhooks, if one was issued under `scheme`. */
export async function storedWebhookSecret(
  db: Knex,
  box: SecretBox,
  adapterKey: string,
  scheme: SharedSecretScheme,
): Promise<string | null> {
  const row = (await db('adcp_webhook_secrets').where({ adapter_key: adapterKey, scheme }).first('secret')) as
    { secret: string } | undefined;
  return row ? box.open(row.secret) : null;
}

export type PushNotificationConfig = ReturnType<typeof pushNotificationConfig>;

/** The push_notification_config a booking carries: where to push, and how (no `authentication`: RFC 9421). */
export function pushNotificationConfig(url: string, auth: { scheme: SharedSecretScheme; secret: string } | null) {
  if (!auth) return { url };
  return { url, authentication: { schemes: [auth.scheme === 'bearer' ? 'Bearer' : 'HMAC-SHA256'], credentials: auth.secret } };
}

/** How far a webhook's time may be from ours, either way. */
export const WEBHOOK_WINDOW_SECONDS = 300;

const equal = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Why a legacy-scheme webhook is refused, or its nonce for the replay check (AdCP 3.0's legacy webhook section). */
export type LegacyCheck = { refused: { code: string; message: string } } | { nonce: string };

/**
 * HMAC-SHA256: `X-ADCP-Signature: sha256=<hex>` over `<X-ADCP-Timestamp>.<raw body>` with the
 * issued secret, the timestamp within the window; the signature itself is the nonce.
 */
export function checkHmac(headers: Record<string, string | string[] | undefined>, body: string, secret: string, now: number): LegacyCheck {
  const signature = headers['x-adcp-signature'];
  const timestamp = headers['x-adcp-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) {
    const mismatch = typeof headers['signature-input'] === 'string' || typeof headers.authorization === 'string';
    return {
      refused: mismatch
        ? { code: 'webhook_mode_mismatch', message: 'The seller is registered to sign webhooks with HMAC-SHA256; this one is not.' }
        : { code: 'webhook_signature_missing', message: 'The webhook carries no X-ADCP-Signature and X-ADCP-Timestamp.' },
    };
  }
  if (Math.abs(now - Number(timestamp)) > WEBHOOK_WINDOW_SECONDS) {
    return {
      refused: {
        code: 'webhook_signature_window_invalid',
        message: `The webhook's timestamp is more than ${WEBHOOK_WINDOW_SECONDS} s from now.`,
      },
    };
  }
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
  if (!equal(signature, expected))
    return { refused: { code: 'webhook_signature_invalid', message: "The webhook's HMAC does not match its body." } };
  return { nonce: signature };
}

/**
 * Bearer: `Authorization: Bearer <issued token>`; the body's `timestamp` within the window and its
 * `idempotency_key` (the nonce) present, since the token alone proves nothing of freshness.
 */
export function checkBearer(headers: Record<string, string | string[] | undefined>, body: string, token: string, now: number): LegacyCheck {
  const authorization = headers.authorization;
  if (typeof authorization !== 'string' || !/^bearer /i.test(authorization)) {
    const mismatch = typeof headers['signature-input'] === 'string' || typeof headers['x-adcp-signature'] === 'string';
    return {
      refused: mismatch
        ? {
            code: 'webhook_mode_mismatch',
            message: 'The seller is registered to authenticate webhooks with a bearer token; this one is not.',
          }
        : { code: 'webhook_signature_missing', message: 'The webhook carries no bearer token.' },
    };
  }
  if (!equal(authorization.slice(7).trim(), token))
    return { refused: { code: 'webhook_signature_invalid', message: "The webhook's token is not the one issued." } };
  let payload: { timestamp?: unknown; idempotency_key?: unknown };
  try {
    payload = JSON.parse(body) as typeof payload;
  } catch {
    return { refused: { code: 'webhook_body_invalid', message: 'The webhook body is not JSON.' } };
  }
  const at = typeof payload?.timestamp === 'string' ? Date.parse(payload.timestamp) / 1000 : NaN;
  if (!Number.isFinite(at) || Math.abs(now - at) > WEBHOOK_WINDOW_SECONDS) {
    return {
      refused: {
        code: 'webhook_signature_window_invalid',
        message: `The webhook's timestamp is missing or more than ${WEBHOOK_WINDOW_SECONDS} s from now.`,
      },
    };
  }
  if (typeof payload.idempotency_key !== 'string' || !payload.idempotency_key) {
    return {
      refused: { code: 'webhook_signature_params_incomplete', message: 'The webhook carries no idempotency_key to tell a replay by.' },
    };
  }
  return { nonce: payload.idempotency_key };
}

/** Seals again, under the current SECRETS_KEY, every issued secret sealed under a replaced key (at start, like subscriptions' secrets). */
export async function sealIssuedWebhookSecrets(db: Knex, box: SecretBox): Promise<number> {
  const rows = (await db('adcp_webhook_secrets')
    .whereNot('secret', 'like', `sealed:v1:${box.keyId}:%`)
    .select('adapter_key', 'secret')) as Array<{
    adapter_key: string;
    secret: string;
  }>;
  let sealed = 0;
  for (const r of rows) {
    sealed += await db('adcp_webhook_secrets')
      .where({ adapter_key: r.adapter_key, secret: r.secret })
      .update({ secret: box.seal(box.open(r.secret)) });
  }
  return sealed;
}
