import type { Knex } from 'knex';
import { databaseOutageOf } from './db-errors';

/**
 * Gathers work that concurrent callers submit into batches, each written by one statement:
 * a submission waits only while `concurrency` batches are already running, and then goes
 * with everything else that arrived meanwhile (up to `maxSize`). Work submitted alone goes
 * alone, on the next turn of the event loop, so batching adds no wait while the database
 * keeps up, and batches grow only as far as the database falls behind.
 *
 * `write` gives one result per item, in order. When a batch of several fails (one item's
 * unique or failed check undoes the whole statement), each item is written again alone, so
 * one item's failure is its own; unless `retryAlone` says the failure is everyone's (the
 * database is down), and then every item fails with it at once. Items with the same `key`
 * never share a batch. A write whose statement committed but whose follow-up failed for one
 * item returns `ItemFailure` in that item's place: that item fails alone, and the batch is not
 * written again (its work is done; written again it would find nothing to do).
 */
/** One item's failure after its batch was written: the item is rejected with `cause`, the rest keep their results. */
export class ItemFailure {
  constructor(readonly cause: unknown) {}
}

/** Runs `run` for each item on its own: a failure becomes that item's ItemFailure, not the batch's. */
export const eachAlone = <T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<Array<R | ItemFailure>> =>
  Promise.all(items.map((item) => run(item).catch((err: unknown) => new ItemFailure(err))));

export class Batcher<I, R> {
  private waiting: Array<{ item: I; resolve: (r: R) => void; reject: (err: unknown) => void }> = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly write: (items: readonly I[]) => Promise<Array<R | ItemFailure>>,
    private readonly opts: {
      concurrency: number;
      maxSize: number;
      key?: (item: I) => string;
      retryAlone?: (err: unknown) => boolean;
    },
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.scheduled && this.running < this.opts.concurrency) {
        // Work submitted in the same turn (several jobs answered by one Redis reply) goes together.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.drain();
        });
      }
    });
  }

  private drain(): void {
    while (this.running < this.opts.concurrency && this.waiting.length) {
      const batch = this.take();
      this.running++;
      void this.settle(batch).finally(() => {
        this.running--;
        this.drain();
      });
    }
  }

  /** The next batch: the oldest waiting items, one per key. */
  private take(): typeof this.waiting {
    const { key, maxSize } = this.opts;
    if (!key) return this.waiting.splice(0, maxSize);
    const keys = new Set<string>();
    const batch: typeof this.waiting = [];
    const rest: typeof this.waiting = [];
    for (const w of this.waiting) {
      const k = key(w.item);
      if (batch.length < maxSize && !keys.has(k)) {
        keys.add(k);
        batch.push(w);
      } else rest.push(w);
    }
    this.waiting = rest;
    return batch;
  }

  private async settle(batch: typeof this.waiting): Promise<void> {
    if (batch.length > 1) {
      try {
        const results = await this.write(batch.map((w) => w.item));
        batch.forEach((w, i) => settleOne(w, results[i]));
        return;
      } catch (err) {
        if (this.opts.retryAlone && !this.opts.retryAlone(err)) {
          batch.forEach((w) => w.reject(err));
          return;
        }
        // Written again one by one, below.
      }
    }
    await Promise.all(
      batch.map(async (w) => {
        try {
          settleOne(w, (await this.write([w.item]))[0]);
        } catch (err) {
          w.reject(err);
        }
      }),
    );
  }
}

function settleOne<R>(w: { resolve: (r: R) => void; reject: (err: unknown) => void }, result: R | ItemFailure | undefined): void {
  if (result instanceof ItemFailure) w.reject(result.cause);
  else w.resolve(result as R);
}

/** Whether a failed batch is worth writing again item by item: not while the database is down or full. */
export const unlessDatabaseDown = (err: unknown): boolean => {
  const outage = databaseOutageOf(err);
  return outage !== 'unreachable' && outage !== 'busy';
};

/** One `make(db)` per connection pool, made on first use: a process's batchers share their pool's batches. */
export function perPool<T>(make: (db: Knex) => T): (db: Knex) => T {
  const made = new WeakMap<Knex, T>();
  return (db) => {
    let it = made.get(db);
    if (it === undefined) {
      it = make(db);
      made.set(db, it);
    }
    return it;
  };
}
