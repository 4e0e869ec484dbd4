import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, waitForBooking } from '../support/bookings';
import { until } from '../support/wait';
import { createDb, type Knex } from '../../shared/db/knex';
import { createLogger } from '../../shared/logger';
import { startWorkers, type RunningWorkers } from '../../workers/main';

let env: TestEnv;
let api: TestApi;
let workerDb: Knex;
let workers: RunningWorkers;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  // The workers' own pool, with a short lock timeout, as DB_LOCK_TIMEOUT_MS would set it.
  workerDb = createDb(env.database.url, { lockTimeoutMs: 200 });
  const config = env.config({ SANDBOX_SLOW_MS: '1500', OUTBOX_RELAY_INTERVAL_MS: '50' });
  workers = await startWorkers({ config, logger: createLogger('silent'), db: workerDb, redisUrl: config.REDIS_URL! });
});
afterAll(async () => {
  await workers.close();
  await workerDb.destroy();
  await env.close();
});

describe('recording a supplier outcome while the database refuses', () => {
  test('the answer is written once the database lets it, so the line is confirmed instead of stranded', async () => {
    const { booking, token } = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_093 }]);
    const lineId = booking.lines[0]!.id;
    await until(
      'the supplier to receive the booking',
      async () => (await env.db('sandbox_ledger').where({ line_id: lineId })).length === 1,
    );
    // Hold the booking's row lock across the supplier's answer: every outcome write meanwhile
    // hits the 200 ms lock timeout (55P03), a real transient refusal.
    await env.db.transaction(async (trx) => {
      await trx('bookings').where({ id: booking.id }).forUpdate();
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await trx('booking_lines').where({ id: lineId }).first('status')).toEqual({ status: 'in-progress' });
    });
    const done = await waitForBooking(api, token, booking.id, (b) => b.status !== 'in-progress');
    expect(done.lines[0]!.status).toBe('confirmed');
    expect(done.status).toBe('confirmed');
    expect(await env.db('supplier_attempts').where({ line_id: lineId }).pluck('status')).toEqual(['confirmed']);
    expect(await env.db('sandbox_ledger').where({ line_id: lineId })).toHaveLength(1);
  }, 30_000);
});
