/**
 * What a bench run makes (databases, Redis prefixes, data directories, child processes) and
 * must not leave behind if it is interrupted: Ctrl-C or SIGTERM ends the run without the
 * `finally` blocks that normally drop them, so they are dropped here instead.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { Redis } from 'ioredis';
import { Client } from 'pg';

interface Made {
  database: string;
  prefix: string;
  dir: string;
  child: ChildProcess;
}

const made: { [K in keyof Made]: Set<Made[K]> } = { database: new Set(), prefix: new Set(), dir: new Set(), child: new Set() };

/** Records something the run made; the returned function says it was cleaned up normally. */
export function madeByBench<K extends keyof Made>(kind: K, what: Made[K]): () => void {
  made[kind].add(what);
  return () => void made[kind].delete(what);
}

/** Deletes every Redis key under a bench prefix. */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

async function dropEverything(adminUrl: string, redisUrl: string): Promise<void> {
  for (const child of made.child) child.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  if (made.database.size) {
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      for (const name of made.database) await admin.query(`drop database if exists ${name} with (force)`);
    } finally {
      await admin.end();
    }
  }
  for (const prefix of made.prefix) await deleteKeys(redisUrl, prefix);
  for (const dir of made.dir) fs.rmSync(dir, { recursive: true, force: true });
}

let interrupted = false;
/** Whether the run is being interrupted: what fails now (the killed service) is not worth reporting. */
export const isInterrupted = () => interrupted;

/** On SIGINT or SIGTERM: drop what the run made (within 20 s), then exit. */
export function dropLeftoversOnInterrupt(adminUrl: string, redisUrl: string): void {
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    console.error(`\n${signal}: dropping the bench's databases, Redis keys and data directories`);
    const timeout = new Promise((r) => setTimeout(r, 20_000).unref());
    void Promise.race([dropEverything(adminUrl, redisUrl).catch((err: Error) => console.error(err.message)), timeout]).then(() =>
      process.exit(130),
    );
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}
