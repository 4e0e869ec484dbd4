import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis';

export type HeartbeatRole = 'worker' | 'scheduler';

export interface Heartbeat {
  id: string;
  role: HeartbeatRole;
  queues: string[];
  host: string;
  pid: number;
  at: number;
  /** Queues this process was asked to consume and cannot (no browser for browser jobs), each with why. */
  unavailable?: Record<string, string>;
}

const hashKey = (prefix: string) => `${prefix}:heartbeats`;

/** A worker or scheduler announces itself every third of the TTL; readiness reads the fresh ones. */
export function startHeartbeat(
  redis: RedisClient,
  prefix: string,
  role: HeartbeatRole,
  queues: string[],
  ttlMs: number,
  unavailable: Record<string, string> = {},
): { id: string; stop(): Promise<void> } {
  const id = `${role}:${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const beat = async () => {
    const hb: Heartbeat = {
      id,
      role,
      queues,
      host: os.hostname(),
      pid: process.pid,
      at: Date.now(),
      ...(Object.keys(unavailable).length ? { unavailable } : {}),
    };
    await redis.hset(hashKey(prefix), id, JSON.stringify(hb));
  };
  const announce = () => void beat().catch(() => undefined);
  announce();
  const timer = setInterval(announce, Math.max(250, Math.floor(ttlMs / 3)));
  timer.unref();
  // Back from an outage (or a Redis that lost its data, or a failover), announce at once rather
  // than at the next tick: readiness waits for fresh heartbeats, and a tick is a third of the TTL away.
  redis.on('ready', announce);
  return {
    id,
    async stop() {
      clearInterval(timer);
      redis.off('ready', announce);
      await redis.hdel(hashKey(prefix), id).catch(() => undefined);
    },
  };
}

/** Fresh heartbeats; stale ones are pruned as they are found. */
export async function freshHeartbeats(redis: RedisClient, prefix: string, ttlMs: number, now = Date.now()): Promise<Heartbeat[]> {
  const all = await redis.hgetall(hashKey(prefix));
  const fresh: Heartbeat[] = [];
  const stale: string[] = [];
  for (const [field, value] of Object.entries(all)) {
    const hb = JSON.parse(value) as Heartbeat;
    if (now - hb.at <= ttlMs) fresh.push(hb);
    else stale.push(field);
  }
  if (stale.length) await redis.hdel(hashKey(prefix), ...stale);
  return fresh;
}
