/**
 * Webhooks: deliveries per second with every event fanned out to 10 subscriptions (loopback
 * receivers answering at once), and what writing a change's event adds to the change's own
 * transaction, with 10 subscriptions wanting it, against the same transaction without it.
 * `npm run bench -- --only webhooks`, or `node --import tsx bench/webhooks.ts` alone.
 */
import http from 'node:http';
import { secretBoxFor } from '../shared/crypto/secret-box';
import type { AddressInfo } from 'node:net';
import { ConfigSchema } from '../shared/config/config';
import { createLogger } from '../shared/logger';
import type { Knex } from '../shared/db/knex';
import { recordEvent } from '../shared/events/record';
import { createSubscription } from '../shared/webhooks/subscription-store';
import { startWorkers } from '../workers/main';
import { withRound, type Round } from './scale-out';
import { REDIS_URL } from './service-process';

const SUBSCRIPTIONS = 10;
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 300);
const CHANGES = Number(process.env.BENCH_WEBHOOK_CHANGES ?? 400);
const WORKSPACE = 'bench-webhooks';

export interface WebhookBenchResult {
  events: number;
  deliveriesPerSecond: number;
  eventsFannedOutPerSecond: number;
  changeP50Ms: number;
  changeP95Ms: number;
  changeWithEventP50Ms: number;
  changeWithEventP95Ms: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function receivers(n: number): Promise<{ urls: string[]; close(): Promise<void> }> {
  const servers = await Promise.all(
    Array.from({ length: n }, async () => {
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return server;
    }),
  );
  return {
    urls: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`),
    close: async () => {
      await Promise.all(servers.map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
    },
  };
}

/** A change's transaction: one row updated, with or without its event. */
async function timedChanges(db: Knex, withEvent: boolean, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await db.transaction(async (trx) => {
      await trx('workspaces')
        .where({ id: WORKSPACE })
        .update({ name: `bench ${i}` });
      if (withEvent) {
        await recordEvent(trx, {
          workspaceId: WORKSPACE,
          type: 'campaign.paused',
          subjectId: `campaign-${i % 50}`,
          subjectVersion: i,
          body: {},
        });
      }
    });
    times.push(performance.now() - t0);
  }
  return times;
}

async function run(round: Round): Promise<WebhookBenchResult> {
  const { db } = round;
  await db('workspaces').insert({ id: WORKSPACE, name: 'bench', pixel_key: `pk-${round.prefix}` });
  const recv = await receivers(SUBSCRIPTIONS);
  for (const url of recv.urls) {
    await createSubscription(
      db,
      WORKSPACE,
      'bench',
      { url, eventTypes: ['booking.line.status_changed', 'campaign.paused'] },
      { allowLoopback: true },
      secretBoxFor(undefined),
    );
  }
  const config = ConfigSchema.parse({
    NODE_ENV: 'test',
    DATABASE_URL: round.dbUrl,
    REDIS_URL,
    REDIS_PREFIX: round.prefix,
    DATA_DIR: round.dataDir,
    AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks',
    WORKER_QUEUES: 'webhooks',
    OUTBOX_RELAY_INTERVAL_MS: '100',
    WEBHOOK_SWEEP_INTERVAL_MS: '500',
  });
  // Alternating slices of changes with and without their event, before the workers start.
  const plain: number[] = [];
  const withEvent: number[] = [];
  for (let slice = 0; slice < 4; slice++) {
    plain.push(...(await timedChanges(db, false, CHANGES / 4)));
    withEvent.push(...(await timedChanges(db, true, CHANGES / 4)));
  }
  await db('webhook_deliveries').delete();
  await db('outbox').delete();

  const workers = await startWorkers({ config, logger: createLogger('silent'), db, redisUrl: REDIS_URL });
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 20 }, async (_, line) => {
        for (let v = 1; v <= EVENTS / 20; v++) {
          await recordEvent(db, {
            workspaceId: WORKSPACE,
            type: 'booking.line.status_changed',
            subjectId: `line-${line}`,
            subjectVersion: v,
            body: {},
          });
        }
      }),
    );
    const expected = EVENTS * SUBSCRIPTIONS;
    for (;;) {
      const [{ n }] = await db('webhook_deliveries').where({ status: 'delivered' }).count('* as n');
      if (Number(n) >= expected) break;
      if (performance.now() - t0 > 300_000) throw new Error(`webhook bench: ${n} of ${expected} delivered after 300 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - t0) / 1000;
    return {
      events: EVENTS,
      deliveriesPerSecond: expected / seconds,
      eventsFannedOutPerSecond: EVENTS / seconds,
      changeP50Ms: quantile(plain, 0.5),
      changeP95Ms: quantile(plain, 0.95),
      changeWithEventP50Ms: quantile(withEvent, 0.5),
      changeWithEventP95Ms: quantile(withEvent, 0.95),
    };
  } finally {
    await workers.close();
    await recv.close();
  }
}

export const benchWebhooks = (): Promise<WebhookBenchResult> => withRound(run);

if (require.main === module) {
  benchWebhooks()
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((err) => {
      console.error(err);
      process.exitCode = 1;
    });
}
