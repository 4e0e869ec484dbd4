import type { RedisClient } from '../redis';
import { unavailable } from '../errors';
import type { AcceptedPageview, StreamedPageview } from './pixel-events';

/**
 * Accepted pageviews wait in one Redis stream until the pixel writer stores them in PostgreSQL.
 * The hash tag keeps the stream and the idempotency markers in one Redis Cluster slot, as the
 * accepting script touches both.
 */
export const pixelStreamKey = (prefix: string) => `${prefix}:{pixel}:events`;
/** Entries the writer could never store (PostgreSQL refused their data), kept for a person to look at. */
export const pixelDeadLetterKey = (prefix: string) => `${prefix}:{pixel}:refused`;
export const PIXEL_WRITER_GROUP = 'pixel-writer';

// Length-prefixed, so that a colon in either key cannot make two pairs collide.
export const markerKey = (prefix: string, pixelKey: string, idempotencyKey: string) =>
  `${prefix}:{pixel}:seen:${pixelKey.length}:${pixelKey}:${idempotencyKey}`;

/**
 * How long a replay is answered `replayed: true` from Redis alone. Past it, the unique index in
 * PostgreSQL still keeps the first event; the replay is answered as new but changes nothing.
 */
export const IDEMPOTENCY_MARKER_TTL_MS = 7 * 86_400_000;

// First event for a pixel and key wins: the marker and the entry are written together or not at all.
const ACCEPT_ONCE = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) == false then return 0 end
redis.call('XADD', KEYS[1], '*', 'e', ARGV[1])
return 1`;

type AcceptingRedis = RedisClient & { pixelAcceptOnce(stream: string, marker: string, payload: string, ttlMs: number): Promise<number> };

function withScript(redis: RedisClient): AcceptingRedis {
  const r = redis as AcceptingRedis;
  if (typeof r.pixelAcceptOnce !== 'function') redis.defineCommand('pixelAcceptOnce', { numberOfKeys: 2, lua: ACCEPT_ONCE });
  return r;
}

const encode = (p: AcceptedPageview) => JSON.stringify([p.advertiserId, p.pixelKey, p.idempotencyKey ?? null, p.event]);

/** A stream entry back to its pageview; the entry id's milliseconds are when Redis accepted it. */
export function decodePageview(streamId: string, payload: string): StreamedPageview {
  const [advertiserId, pixelKey, idempotencyKey, event] = JSON.parse(payload) as [string, string, string | null, StreamedPageview['event']];
  return {
    streamId,
    advertiserId,
    pixelKey,
    ...(idempotencyKey ? { idempotencyKey } : {}),
    event,
    receivedAt: new Date(Number(streamId.slice(0, streamId.indexOf('-')))),
  };
}

/**
 * Accepts a pageview in one Redis round trip; once this returns, the event is durable (as
 * durable as Redis's append-only file). With an idempotency key, a replay adds nothing and
 * answers `replayed: true`. Redis unreachable is a 503: nothing was accepted.
 */
export async function acceptPageview(redis: RedisClient, prefix: string, pageview: AcceptedPageview): Promise<{ replayed: boolean }> {
  try {
    if (!pageview.idempotencyKey) {
      await redis.xadd(pixelStreamKey(prefix), '*', 'e', encode(pageview));
      return { replayed: false };
    }
    const added = await withScript(redis).pixelAcceptOnce(
      pixelStreamKey(prefix),
      markerKey(prefix, pageview.pixelKey, pageview.idempotencyKey),
      encode(pageview),
      IDEMPOTENCY_MARKER_TTL_MS,
    );
    return { replayed: added === 0 };
  } catch {
    throw unavailable('Pageview tracking is unavailable. Retry shortly.', 'dependency_unavailable');
  }
}

/**
 * When the oldest pageview not yet acknowledged as stored was accepted, or null when none waits.
 * The writer deletes entries once stored, so the stream's first entry is that one.
 */
export async function oldestUnstoredPageviewAt(redis: RedisClient, prefix: string): Promise<Date | null> {
  const [first] = await redis.xrange(pixelStreamKey(prefix), '-', '+', 'COUNT', 1);
  return first ? new Date(Number(first[0].slice(0, first[0].indexOf('-')))) : null;
}
