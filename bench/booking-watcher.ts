import type { Knex } from 'knex';

/**
 * Resolves each booking's wait once it reaches `status`, with one poll every 10 ms for every
 * booking still waiting rather than one per booking: the watcher must not load the database it
 * measures. It reads on the bench's own connection, so its polls are not the service's.
 */
export function bookingWatcher(db: Knex, status: string): { until(bookingId: string): Promise<void>; stop(): Promise<void> } {
  const waiting = new Map<string, () => void>();
  let watching = true;
  const loop = (async () => {
    while (watching) {
      if (waiting.size) {
        const done: string[] = await db('bookings')
          .whereIn('id', [...waiting.keys()])
          .where({ status })
          .pluck('id');
        for (const id of done) {
          waiting.get(id)!();
          waiting.delete(id);
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    until: (bookingId) => new Promise<void>((resolve) => waiting.set(bookingId, resolve)),
    async stop() {
      watching = false;
      await loop;
    },
  };
}
