import { FlowProducer, Queue, type JobsOptions } from 'bullmq';
import type { RedisClient } from '../redis';
import { queuePrefix } from './names';

/** A job for one of the queues, as `addAll` takes it. */
export interface QueuedJob {
  queueName: string;
  name: string;
  data: unknown;
  opts?: JobsOptions;
}

/** Queue producers by name, created on first use and closed together. */
export class QueueProducers {
  private readonly queues = new Map<string, Queue>();
  private flows: FlowProducer | undefined;

  constructor(
    readonly connection: RedisClient,
    private readonly redisPrefix: string,
  ) {}

  get = (name: string): Queue => {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: queuePrefix(this.redisPrefix, name) });
      // Connection trouble reaches the caller as the failed add, and the connection's own listeners.
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    return q;
  };

  /**
   * Adds jobs to any of the queues (a launch's lines each go to their own supplier's queue). A
   * job whose id is already there is not added again, so a caller that saw a failure may add
   * the same jobs again.
   *
   * On one Redis, all of them in one round trip (a MULTI over the queues). On a Redis Cluster
   * each queue is a slot of its own and one MULTI may not span slots: one MULTI per queue, the
   * queues in parallel.
   */
  addAll = async (jobs: readonly QueuedJob[]): Promise<void> => {
    if (!jobs.length) return;
    if (!this.connection.isCluster) {
      await this.flowProducer().addBulk(jobs.map((j) => ({ ...j, prefix: queuePrefix(this.redisPrefix, j.queueName) })));
      return;
    }
    const byQueue = new Map<string, QueuedJob[]>();
    for (const job of jobs) byQueue.set(job.queueName, [...(byQueue.get(job.queueName) ?? []), job]);
    await Promise.all(
      [...byQueue].map(([queue, queued]) =>
        this.get(queue).addBulk(queued.map(({ name, data, opts }) => ({ name, data, opts: opts ?? {} }))),
      ),
    );
  };

  private flowProducer(): FlowProducer {
    if (!this.flows) {
      this.flows = new FlowProducer({ connection: this.connection });
      // Connection trouble reaches the caller as the failed add, and the connection's own listeners.
      this.flows.on('error', () => undefined);
    }
    return this.flows;
  }

  all(): Queue[] {
    return [...this.queues.values()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.all().map((q) => q.close()), this.flows?.close()]);
    this.queues.clear();
    this.flows = undefined;
  }
}
