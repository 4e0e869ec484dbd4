/**
 * CPU per stored pageview in the pixel writer's batches, for the capacity model in
 * docs/scaling.md: `node --import tsx bench/pixel-rows.ts`. Stores PIXEL_ROWS pageviews
 * (default 100,000) in batches of 500, as the pixel writer does, into a throwaway database,
 * and reads the CPU of this process and of PostgreSQL's server processes over the writes.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDb } from '../shared/db/knex';
import { migrateLatest } from '../shared/db/migrations';
import { storePageviews, type StreamedPageview } from '../shared/pixel/pixel-events';
import { ensureWorkspace } from '../shared/workspaces/workspace-store';
import { ADMIN_URL } from './service-process';
import { formatPerOperation, machineCpu, perOperation } from './machine-cpu';

const ROWS = Number(process.env.PIXEL_ROWS ?? 100_000);
const BATCH = 500;

async function main(): Promise<void> {
  const name = `fdbench_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createDb(url.toString(), { max: 4 });
  try {
    await migrateLatest(db);
    const workspace = await ensureWorkspace(db, 'bench-pixel-rows');
    const base = Date.now();
    const pageview = (i: number): StreamedPageview => ({
      streamId: `${base + Math.floor(i / 50)}-${i % 50}`,
      advertiserId: workspace.id,
      pixelKey: workspace.pixelKey,
      event: { kind: 'purchase', event: 'checkout-complete', valueMinor: 4_299, promoCode: 'SPRING' },
      receivedAt: new Date(base),
    });
    // Two writers, as two pixel-role processes would write.
    const cpu = machineCpu();
    const started = Date.now();
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < ROWS) {
          const from = next;
          next += BATCH;
          await storePageviews(
            db,
            Array.from({ length: Math.min(BATCH, ROWS - from) }, (_, k) => pageview(from + k)),
          );
        }
      }),
    );
    const share = cpu.stop();
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `pixel rows: ${ROWS} stored in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds)}/s); CPU ms per 1,000 rows: ${
        share ? formatPerOperation(perOperation(share, ROWS / 1000)) : 'n/a'
      }`,
    );
  } finally {
    await db.destroy();
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  }
}

void main();
