import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { MAINTENANCE_QUEUE, queuePrefix } from '../../shared/queues/names';
import type { TestEnv } from './api';
import { TEST_REDIS_URL } from './env';

/** Runs one maintenance job through the real queue (a worker must be consuming it) and returns its result. */
export async function runMaintenanceJob<T = unknown>(env: TestEnv, name: string): Promise<T> {
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const eventsConnection = connection.duplicate();
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, prefix: queuePrefix(env.prefix, MAINTENANCE_QUEUE) });
  const events = new QueueEvents(MAINTENANCE_QUEUE, { connection: eventsConnection, prefix: queuePrefix(env.prefix, MAINTENANCE_QUEUE) });
  try {
    await events.waitUntilReady();
    const job = await queue.add(name, {});
    return (await job.waitUntilFinished(events, 10_000)) as T;
  } finally {
    await events.close();
    await queue.close();
    connection.disconnect();
    eventsConnection.disconnect();
  }
}

/**
 * What every completed run of a housekeeping job returned, scheduled runs included: a scheduled
 * run may take work before (or instead of) the run a test asked for.
 */
export async function completedRuns<T = unknown>(env: TestEnv, name: string): Promise<T[]> {
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, prefix: queuePrefix(env.prefix, MAINTENANCE_QUEUE) });
  try {
    const jobs = await queue.getJobs(['completed']);
    return jobs.filter((j) => j.name === name).map((j) => j.returnvalue as T);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
