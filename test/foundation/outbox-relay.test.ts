import { Redis } from 'ioredis';
import { createTestEnv, type TestEnv } from '../support/api';
import { TEST_REDIS_URL } from '../support/env';
import { createLogger } from '../../shared/logger';
import { enqueueInTransaction, relayAfterCommit, relayOutbox } from '../../shared/outbox/outbox';
import type { JobMessage } from '../../shared/queues/jobs';
import { QueueProducers } from '../../shared/queues/producers';

/** The outbox relay hands a launch's messages to their several queues together, once each. */
let env: TestEnv;
let connection: Redis;
let producers: QueueProducers;
beforeAll(async () => {
  env = await createTestEnv();
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  producers = new QueueProducers(connection, env.prefix);
});
afterAll(async () => {
  await producers.close();
  connection.disconnect();
  await env.close();
});

const messages = (tag: string): JobMessage[] =>
  ['supplier.relay-a', 'supplier.relay-b', 'supplier.relay-c'].map((queue, i) => ({
    queue,
    jobName: 'book-line',
    jobId: `${tag}-${i}`,
    payload: { bookingId: `${tag}-booking`, lineId: `${tag}-line-${i}` },
  }));

const unrelayed = async (sent: readonly JobMessage[]) =>
  Number(
    (
      await env
        .db('outbox')
        .whereIn(
          'job_id',
          sent.map((m) => m.jobId),
        )
        .whereNull('relayed_at')
        .count({ n: '*' })
    )[0]!.n,
  );

const jobsIn = async (queue: string) => (await producers.get(queue).getJobs(['waiting'])).map((j) => ({ id: j.id, data: j.data }));

describe('outbox relay', () => {
  test('pending rows go to their own queues, each job once with the supplier options, and are marked relayed', async () => {
    const sent = messages('pending');
    await env.db.transaction((trx) => enqueueInTransaction(trx, sent));

    expect(await relayOutbox(env.db, producers.addAll)).toBe(3);

    for (const m of sent) {
      expect(await jobsIn(m.queue)).toContainEqual({ id: m.jobId, data: m.payload });
      const job = await producers.get(m.queue).getJob(m.jobId);
      // Never retried by the queue: the attempt row decides.
      expect(job!.opts.attempts).toBe(1);
    }
    expect(await unrelayed(sent)).toBe(0);
    expect(await relayOutbox(env.db, producers.addAll)).toBe(0);
  });

  test('with nothing waiting, a relay is one read and opens no transaction', async () => {
    // Whatever earlier tests left is relayed first.
    await relayOutbox(env.db, producers.addAll);
    const statements: string[] = [];
    const seen = (q: { sql: string }) => statements.push(q.sql);
    env.db.on('query', seen);
    try {
      expect(await relayOutbox(env.db, producers.addAll)).toBe(0);
    } finally {
      env.db.off('query', seen);
    }
    expect(statements).toEqual(['select exists (select 1 from outbox where relayed_at is null) as pending']);

    // A row committed after that probe is the next relay's.
    const sent = messages('after-probe');
    await env.db.transaction((trx) => enqueueInTransaction(trx, sent));
    expect(await relayOutbox(env.db, producers.addAll)).toBe(3);
    expect(await unrelayed(sent)).toBe(0);
  });

  test('a relay after commit and a second relay of the same rows leave one job per message', async () => {
    const sent = messages('twice');
    await env.db.transaction((trx) => enqueueInTransaction(trx, sent));
    const log = createLogger('silent');

    await relayAfterCommit(env.db, producers.addAll, log, {}, sent);
    expect(await unrelayed(sent)).toBe(0);
    // The workers' relay reopened and sent the same rows again (a crash before they were marked).
    await env
      .db('outbox')
      .whereIn(
        'job_id',
        sent.map((m) => m.jobId),
      )
      .update({ relayed_at: null });
    expect(await relayOutbox(env.db, producers.addAll)).toBe(3);
    await relayAfterCommit(env.db, producers.addAll, log, {}, sent);

    for (const m of sent) {
      expect((await jobsIn(m.queue)).filter((j) => j.id === m.jobId)).toEqual([{ id: m.jobId, data: m.payload }]);
    }
    expect(await unrelayed(sent)).toBe(0);
  });

  test('requests relaying at once each see their own rows marked relayed, the marks written together', async () => {
    const sent = Array.from({ length: 6 }, (_, i) => messages(`concurrent-${i}`));
    await env.db.transaction((trx) => enqueueInTransaction(trx, sent.flat()));
    const log = createLogger('silent');

    await Promise.all(sent.map((m) => relayAfterCommit(env.db, producers.addAll, log, {}, m)));

    expect(await unrelayed(sent.flat())).toBe(0);
    for (const m of sent.flat()) expect((await jobsIn(m.queue)).filter((j) => j.id === m.jobId)).toHaveLength(1);
  });
});
