import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { pinnedLookup, resolveTarget, UnsafeTarget, type CheckedAddress } from '../net/public-address';
import type { UrlPolicy } from './url-safety';
import type { Claimed, SendResult } from './delivery-engine';

/** The JSON a receiver gets: the event's envelope and its small body of ids and states. */
export function eventPayload(e: Claimed['event']): string {
  return JSON.stringify({
    id: e.id,
    type: e.type,
    timestamp: e.occurredAt.toISOString(),
    workspaceId: e.workspaceId,
    subject: { type: e.subjectType, id: e.subjectId, version: e.subjectVersion },
    data: e.body,
  });
}

/**
 * Standard Webhooks headers. The `webhook-id` is the event's id, the same on every retry; during
 * a secret rotation's overlap, `webhook-signature` holds a signature by each secret.
 */
export function signedHeaders(secrets: readonly string[], msgId: string, at: Date, payload: string): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(msgId, at, payload));
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

/**
 * One send: the host is resolved and checked now, and the connection made to that address
 * (its name still used for TLS and the Host header). Redirects are not followed (a 3xx is not
 * delivered), and the whole exchange has `timeoutMs`. Never throws: failures are results.
 */
export async function sendDelivery(c: Claimed, policy: UrlPolicy, timeoutMs: number): Promise<SendResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const done = (statusCode: number | null, error: string | null): SendResult => ({
    startedAt,
    latencyMs: performance.now() - t0,
    statusCode,
    error,
  });
  const url = new URL(c.url);
  let target: CheckedAddress;
  try {
    target = await resolveTarget(url, policy);
  } catch (err) {
    return done(null, err instanceof UnsafeTarget ? err.message : 'the host could not be resolved');
  }
  const payload = eventPayload(c.event);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Flightdeck-Webhooks/1',
    ...signedHeaders(c.secrets, c.event.id, new Date(), payload),
  };
  return new Promise<SendResult>((resolve) => {
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: 'POST', headers, lookup: pinnedLookup(target), agent: false, timeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) },
      (res) => {
        // The body is not needed: read and drop it, so the socket closes cleanly.
        res.resume();
        res.on('end', () => resolve(done(res.statusCode ?? null, null)));
        res.on('error', () => resolve(done(res.statusCode ?? null, 'the response broke off')));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) =>
      resolve(
        done(
          null,
          err.name === 'AbortError' || err.message === 'timed out'
            ? 'timed out'
            : `connection failed: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        ),
      ),
    );
    req.end(payload);
  });
}
