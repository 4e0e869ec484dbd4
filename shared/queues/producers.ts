import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix } from './names';

/** Queue producers by name, created on first use and closed together. */
export class QueueProducers {
  private readonly queues = new Map<string, Queue>();

  constructor(
    readonly connection: Redis,
    private readonly redisPrefix: string,
  ) {}

  get = (name: string): Queue => {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: queuePrefix(this.redisPrefix) });
      this.queues.set(name, q);
    }
    return q;
  };

  all(): Queue[] {
    return [...this.queues.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((q) => q.close()));
    this.queues.clear();
  }
}
