import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../shared/redis';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger';
import { storePageviews, type StreamedPageview } from '../shared/pixel/pixel-events';
import { PIXEL_WRITER_GROUP, decodePageview, pixelDeadLetterKey, pixelStreamKey } from '../shared/pixel/pixel-stream';

export interface PixelWriterOptions {
  /** A connection of its own: the writer blocks on it while it waits for pageviews. */
  redis: RedisClient;
  prefix: string;
  db: Knex;
  logger: Logger;
  consumer?: string;
  batchSize?: number;
  blockMs?: number;
  /**
   * After a batch smaller than batchSize, how long to let pageviews gather before reading
   * again: under load, fewer and larger batches (one insert and one acknowledgement each).
   */
  lingerMs?: number;
  /** A consumer's entries unacknowledged for this long are taken over (their writer died). */
  reclaimIdleMs?: number;
  /** A consumer with nothing pending and silent for this long is removed from the group (its writer is gone). */
  forgetIdleMs?: number;
}

/** One stream entry as read: its id and, unless the entry was deleted meanwhile, its pageview. */
export interface PixelEntry {
  id: string;
  payload: string | null;
}

type StreamReply = Array<[string, Array<[string, string[] | null]>]> | null;

const entriesOf = (reply: StreamReply): PixelEntry[] =>
  (reply?.[0]?.[1] ?? []).map(([id, fields]) => ({ id, payload: fields ? (fields[fields.indexOf('e') + 1] ?? null) : null }));

// Data PostgreSQL refuses whatever the moment (SQLSTATE classes 22 and 23); anything else is retried.
const isRefusedData = (err: unknown) => /^2[23]/.test(String((err as { code?: unknown })?.code ?? ''));

/**
 * Removes the group's consumers that hold no entries and have not read for the given time:
 * writers that died or were stopped without leaving. Atomic, so a consumer cannot read
 * entries between the check and its removal (removing a consumer drops its pending entries).
 */
const FORGET_SILENT_CONSUMERS = `
local removed = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
  if info['name'] ~= ARGV[2] and tonumber(info['pending']) == 0 and tonumber(info['idle']) >= tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed`;

/** Waits `ms`, or less if the writer is stopped; leaves no listener behind on the signal. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Stores accepted pageviews in PostgreSQL in batches. Reads the stream through a consumer group,
 * writes a batch in one statement, then acknowledges and deletes its entries. An entry is
 * acknowledged only after its row is committed; written twice (a crash before the
 * acknowledgement, or a reclaimed entry), it adds nothing, as rows are unique per entry. While
 * PostgreSQL is down, entries stay pending in Redis and are written when it is back.
 */
export class PixelWriter {
  readonly consumer: string;
  private readonly stream: string;
  private readonly batchSize: number;
  private readonly blockMs: number;
  private readonly lingerMs: number;
  private readonly reclaimIdleMs: number;
  private readonly forgetIdleMs: number;
  private retryOwn = true;
  private nextReclaimAt = 0;
  private reclaimCursor = '0-0';
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(private readonly o: PixelWriterOptions) {
    this.consumer = o.consumer ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.stream = pixelStreamKey(o.prefix);
    this.batchSize = o.batchSize ?? 500;
    this.blockMs = o.blockMs ?? 1000;
    this.lingerMs = o.lingerMs ?? 50;
    this.reclaimIdleMs = o.reclaimIdleMs ?? 30_000;
    // A live writer reads at least every blockMs; an hour of silence is a writer that is gone.
    this.forgetIdleMs = o.forgetIdleMs ?? 3_600_000;
  }

  async ensureGroup(): Promise<void> {
    await this.o.redis.xgroup('CREATE', this.stream, PIXEL_WRITER_GROUP, '0', 'MKSTREAM').catch((err: Error) => {
      if (!/BUSYGROUP/.test(err.message)) throw err;
    });
  }

  /** New entries, waiting up to blockMs for some. */
  readNew(): Promise<PixelEntry[]> {
    return this.read('>');
  }

  /** Entries this consumer read but has not acknowledged: a batch whose write failed. */
  readOwnPending(): Promise<PixelEntry[]> {
    return this.read('0');
  }

  // Redis blocks only for new entries ('>'); reading this consumer's pending history returns at once.
  private async read(from: '>' | '0'): Promise<PixelEntry[]> {
    const reply = (await this.o.redis.xreadgroup(
      'GROUP',
      PIXEL_WRITER_GROUP,
      this.consumer,
      'COUNT',
      this.batchSize,
      'BLOCK',
      this.blockMs,
      'STREAMS',
      this.stream,
      from,
    )) as StreamReply;
    return entriesOf(reply);
  }

  /** Takes over entries another consumer has left unacknowledged for reclaimIdleMs. */
  async reclaim(): Promise<PixelEntry[]> {
    const [cursor, claimed, deleted] = (await this.o.redis.xautoclaim(
      this.stream,
      PIXEL_WRITER_GROUP,
      this.consumer,
      this.reclaimIdleMs,
      this.reclaimCursor,
      'COUNT',
      this.batchSize,
    )) as [string, Array<[string, string[] | null]>, string[]?];
    this.reclaimCursor = cursor;
    return [...entriesOf([['', claimed]]), ...(deleted ?? []).map((id) => ({ id, payload: null }))];
  }

  /** Removes consumers that hold nothing and have been silent for forgetIdleMs; returns how many. */
  async forgetSilentConsumers(): Promise<number> {
    return (await this.o.redis.eval(
      FORGET_SILENT_CONSUMERS,
      1,
      this.stream,
      PIXEL_WRITER_GROUP,
      this.consumer,
      this.forgetIdleMs,
    )) as number;
  }

  /** Writes the entries' pageviews; an entry whose data PostgreSQL refuses is set aside, not retried forever. */
  async store(entries: PixelEntry[]): Promise<number> {
    const pageviews: StreamedPageview[] = [];
    for (const e of entries) if (e.payload !== null) pageviews.push(decodePageview(e.id, e.payload));
    try {
      return await storePageviews(this.o.db, pageviews);
    } catch (err) {
      if (!isRefusedData(err)) throw err;
    }
    // One row refused its batch: find it by writing one at a time.
    let stored = 0;
    for (const p of pageviews) {
      try {
        stored += await storePageviews(this.o.db, [p]);
      } catch (err) {
        if (!isRefusedData(err)) throw err;
        const code = String((err as { code?: unknown }).code);
        const payload = entries.find((e) => e.id === p.streamId)!.payload!;
        await this.o.redis.xadd(pixelDeadLetterKey(this.o.prefix), '*', 'id', p.streamId, 'e', payload, 'code', code);
        this.o.logger.error({ streamId: p.streamId, code }, 'pageview refused by the database; kept aside in the refused stream');
      }
    }
    return stored;
  }

  /** Acknowledges written entries and deletes them, so the stream holds only what is not yet stored. */
  async ack(entries: PixelEntry[]): Promise<void> {
    if (!entries.length) return;
    const ids = entries.map((e) => e.id);
    const results = await this.o.redis
      .multi()
      .xack(this.stream, PIXEL_WRITER_GROUP, ...ids)
      .xdel(this.stream, ...ids)
      .exec();
    const failed = results?.find(([err]) => err)?.[0];
    if (!results || failed) throw failed ?? new Error('pixel stream acknowledgement aborted');
  }

  /** One batch: a failed one of its own first, then one left by a dead writer, then new entries. */
  async step(): Promise<number> {
    let entries: PixelEntry[] = [];
    if (this.retryOwn) {
      entries = await this.readOwnPending();
      if (!entries.length) this.retryOwn = false;
    }
    const fromOwn = entries.length > 0;
    if (!entries.length && Date.now() >= this.nextReclaimAt) {
      entries = await this.reclaim();
      if (this.reclaimCursor === '0-0') {
        // A full pass over the stream: what dead writers left is taken over; now forget them.
        this.nextReclaimAt = Date.now() + Math.max(this.reclaimIdleMs / 2, 100);
        await this.forgetSilentConsumers();
      }
    }
    if (!entries.length) entries = await this.readNew();
    if (!entries.length) return 0;
    // Until acknowledged, these are this consumer's pending entries: a failure retries them first.
    this.retryOwn = true;
    await this.store(entries);
    await this.ack(entries);
    this.retryOwn = fromOwn;
    return entries.length;
  }

  start(): void {
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      try {
        const n = await this.step();
        failures = 0;
        if (n > 0 && n < this.batchSize && this.lingerMs > 0) await sleep(this.lingerMs, this.stopping.signal);
      } catch (err) {
        failures += 1;
        // Pending entries stay in Redis; they are retried, with a growing pause, until they are stored.
        this.o.logger.warn({ err: { message: (err as Error).message }, failures }, 'pixel writer could not store a batch; will retry');
        await sleep(Math.min(5000, 100 * 2 ** Math.min(failures, 6)), this.stopping.signal);
      }
    }
  }

  /**
   * Finishes the batch in hand, then leaves the group if it holds no entries. Does not wait
   * long for a Redis that is gone: unacknowledged entries stay pending for another writer.
   */
  async close(): Promise<void> {
    this.stopping.abort();
    const leave = async () => {
      await this.loop;
      const own = await this.o.redis.xpending(this.stream, PIXEL_WRITER_GROUP, '-', '+', 1, this.consumer);
      if ((own as unknown[]).length === 0) await this.o.redis.xgroup('DELCONSUMER', this.stream, PIXEL_WRITER_GROUP, this.consumer);
    };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([leave().catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, this.blockMs + 2000).unref()))]);
    clearTimeout(timer);
  }
}

/** Starts a writer on a connection of its own; closing it closes the connection. */
export async function startPixelWriter(opts: Omit<PixelWriterOptions, 'redis'> & { redis: RedisClient }): Promise<PixelWriter> {
  const writer = new PixelWriter(opts);
  await writer.ensureGroup();
  writer.start();
  return writer;
}
