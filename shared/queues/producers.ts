import { FlowProducer, Queue, type FlowJob } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix } from './names';

/** Queue producers by name, created on first use and closed together. */
export class QueueProducers {
  private readonly queues = new Map<string, Queue>();
  private flows: FlowProducer | undefined;

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

  /**
   * Adds jobs to any of the queues in one round trip to Redis (a MULTI): a launch's lines each
   * go to their own supplier's queue. A job whose id is already there is not added again.
   */
  addAll = async (jobs: ReadonlyArray<Omit<FlowJob, 'children' | 'prefix'>>): Promise<void> => {
    if (!jobs.length) return;
    if (!this.flows) {
      this.flows = new FlowProducer({ connection: this.connection, prefix: queuePrefix(this.redisPrefix) });
      // Connection trouble reaches the caller as the failed add, and the connection's own listeners.
      this.flows.on('error', () => undefined);
    }
    await this.flows.addBulk(jobs.map((j) => ({ ...j })));
  };

  all(): Queue[] {
    return [...this.queues.values()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.all().map((q) => q.close()), this.flows?.close()]);
    this.queues.clear();
    this.flows = undefined;
  }
}
