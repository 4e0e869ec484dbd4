import type { Knex } from 'knex';
import { callApi } from './campaigns';
import type { ServiceProcess } from './service-process';

/**
 * Pauses the campaigns given (their seven lines confirmed), 10 at a time, each timed from its
 * POST until every line is stopped: the in-flight control's round trip through the suppliers,
 * beside the launch it follows.
 */
export async function pauses(service: ServiceProcess, token: string, db: Knex, campaigns: string[]): Promise<number[]> {
  const settled: number[] = [];
  const waiting = new Map<string, () => void>();
  let watching = true;
  // One poll for every booking still waiting, as the launch bench does: the watcher must not load what it measures.
  const watcher = (async () => {
    while (watching) {
      if (waiting.size) {
        const done: string[] = await db('bookings')
          .whereIn('id', [...waiting.keys()])
          .where({ status: 'stopped' })
          .pluck('id');
        for (const id of done) {
          waiting.get(id)!();
          waiting.delete(id);
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const queue = [...campaigns];
  try {
    await Promise.race([
      Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let id = queue.shift(); id; id = queue.shift()) {
            const t0 = performance.now();
            const { booking } = await callApi(service.url, token, `/api/v1/campaigns/${id}/pause`, 'POST');
            await new Promise<void>((resolve) => waiting.set(booking.id as string, resolve));
            settled.push(performance.now() - t0);
          }
        }),
      ),
      service.died,
    ]);
  } finally {
    watching = false;
    await watcher;
  }
  return settled;
}
