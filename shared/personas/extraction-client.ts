import { QueueEvents, type Queue } from 'bullmq';
import type { Knex } from 'knex';
import { unavailable } from '../errors';
import { PERSONA_EXTRACT, personaExtractJobId } from '../queues/jobs';
import { PERSONA_EXTRACT_QUEUE, queuePrefix } from '../queues/names';
import type { Generation } from './persona-store';
import { createExtractionRequest } from './persona-store';
import { createWorkerRedis, type RedisClient, type RedisTarget } from '../redis';

/**
 * The API's side of persona extraction: queue the request (its brief stays in Postgres) and
 * wait, for a bounded time, for a worker to answer.
 */
export class ExtractionClient {
  private events: QueueEvents | null = null;
  private connection: RedisClient | null = null;

  constructor(
    private readonly queue: () => Queue,
    private readonly redis: RedisTarget,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

  /** Completion events are only seen by a listener that was ready before the job was added. */
  private async listener(): Promise<QueueEvents> {
    if (!this.events) {
      this.connection = createWorkerRedis(this.redis);
      this.connection.on('error', () => undefined);
      this.events = new QueueEvents(PERSONA_EXTRACT_QUEUE, {
        connection: this.connection,
        prefix: queuePrefix(this.prefix, PERSONA_EXTRACT_QUEUE),
      });
    }
    await this.events.waitUntilReady();
    return this.events;
  }

  async extract(
    db: Knex,
    advertiserId: string,
    requestedBy: string,
    brief: string,
    channels: readonly string[],
  ): Promise<{ personaId: string; generation: Generation }> {
    const requestId = await createExtractionRequest(db, advertiserId, requestedBy, brief, channels);
    let events: QueueEvents;
    try {
      events = await this.listener();
    } catch {
      throw unavailable('Persona extraction is unavailable (queue unreachable). Retry shortly.', 'extraction_unavailable');
    }
    const job = await this.queue()
      .add(
        PERSONA_EXTRACT,
        { requestId },
        { jobId: personaExtractJobId(requestId), attempts: 2, removeOnComplete: { age: 3600 }, removeOnFail: { age: 24 * 3600 } },
      )
      .catch(() => {
        throw unavailable('Persona extraction is unavailable (queue unreachable). Retry shortly.', 'extraction_unavailable');
      });
    try {
      return (await job.waitUntilFinished(events, this.timeoutMs)) as { personaId: string; generation: Generation };
    } catch {
      // Nobody took it in time: withdraw it if still waiting so that no persona appears unasked.
      await job.remove().catch(() => undefined);
      throw unavailable(`No persona extraction worker answered within ${this.timeoutMs} ms. Retry shortly.`, 'extraction_unavailable');
    }
  }

  async close(): Promise<void> {
    await this.events?.close().catch(() => undefined);
    this.connection?.disconnect();
  }
}
