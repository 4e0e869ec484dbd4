import { sellersAt } from '../support/adcp-env';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { walletAndLedger } from '../support/wallet';
import { until } from '../support/wait';
import { launchOnSeller } from '../support/adcp-buy';
import { productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { settlePendingTask } from '../../shared/bookings/pending-tasks';
import type { RunningWorkers } from '../../workers/main';

let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ acme: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  // Polled only when the test says so.
  workers = await env.workers({ ADCP_SELLERS: sellers, ADCP_TASK_POLL_INTERVAL_MS: '3600000', WORKER_QUEUES: 'supplier.adcp-acme' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

/** A live line the seller answered `submitted`: in progress, waiting on its task. */
async function pendingLine(org: string) {
  const { token, booking } = await launchOnSeller(env, api, org, 'adcp-acme', productRef('ctv_async'));
  const lineId = booking.lines[0]!.id;
  let task: { attempt_id: string; status: string } | undefined;
  await until('the seller answers submitted', async () => {
    task = await env.db('supplier_tasks').where({ line_id: lineId }).first();
    return !!task;
  });
  expect(await env.db('booking_lines').where({ id: lineId }).first()).toMatchObject({ status: 'in-progress' });
  expect(await env.db('supplier_attempts').where({ id: task!.attempt_id }).first()).toMatchObject({ status: 'pending' });
  return { token, bookingId: booking.id, lineId, attemptId: task!.attempt_id };
}

describe('a booking the seller is still working on', () => {
  test('polling tasks/get settles it once the seller has finished', async () => {
    const { lineId, attemptId } = await pendingLine('org-q1');
    seller.finish();
    await until('the poll settles the line', async () => {
      // Each round stands for a poll interval gone by: a poll that found the seller still working
      // put the task an hour (the interval here) ahead.
      await env.db('supplier_tasks').where({ attempt_id: attemptId }).update({ next_poll_at: env.db.fn.now() });
      await workers.pollSupplierTasksNow();
      return (await env.db('booking_lines').where({ id: lineId }).first()).status === 'confirmed';
    });
    expect(await env.db('supplier_tasks').where({ attempt_id: attemptId }).first()).toMatchObject({ status: 'done' });
    expect((await walletAndLedger(env, 'org-q1')).consistent).toBe(true);
  }, 60_000);

  test('two answers at once (a poll and a webhook): exactly one moves the line, the other changes nothing', async () => {
    const { bookingId, lineId, attemptId } = await pendingLine('org-q2');
    const ids = { attemptId, bookingId, lineId };
    const results = await Promise.all([
      settlePendingTask(env.db, ids, { kind: 'confirmed', providerReference: 'ord_x/li_x' }, 'poll'),
      settlePendingTask(env.db, ids, { kind: 'rejected', reason: 'no inventory' }, 'webhook'),
    ]);
    expect(results.filter((r) => r === 'already-settled')).toHaveLength(1);
    const winner = results.find((r) => r !== 'already-settled');
    const line = await env.db('booking_lines').where({ id: lineId }).first();
    expect(line.status).toBe(winner);
    expect((await env.db('supplier_attempts').where({ id: attemptId }).first()).status).toBe(winner);
    // And a later answer (the seller's own completion, polled) changes nothing either.
    expect(await settlePendingTask(env.db, ids, { kind: 'confirmed', providerReference: 'ord_y/li_y' }, 'poll')).toBe('already-settled');
    expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe(winner);
    expect((await walletAndLedger(env, 'org-q2')).consistent).toBe(true);
  }, 60_000);

  test("a task the seller reports as unknown sends the line to reconciliation; 'still working' only notes it", async () => {
    const { bookingId, lineId, attemptId } = await pendingLine('org-q3');
    const ids = { attemptId, bookingId, lineId };
    expect(await settlePendingTask(env.db, ids, { kind: 'pending', taskId: 't', supplierStatus: 'working' }, 'poll')).toBe('pending');
    expect(await env.db('supplier_tasks').where({ attempt_id: attemptId }).first()).toMatchObject({
      status: 'pending',
      supplier_status: 'working',
    });
    expect(await settlePendingTask(env.db, ids, { kind: 'unknown', cause: 'The seller reports the task as unknown.' }, 'poll')).toBe(
      'reconciliation-required',
    );
    expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe('reconciliation-required');
  }, 60_000);

  /** The task as if accepted `hours` ago, and due to be asked now. */
  const aged = (attemptId: string, hours: number) =>
    env
      .db('supplier_tasks')
      .where({ attempt_id: attemptId })
      .update({
        created_at: env.db.raw(`now() - interval '${hours} hours'`),
        next_poll_at: env.db.fn.now(),
      });

  test('a task the seller keeps working on is waited on for ADCP_TASK_MAX_WAIT_HOURS (72), then a person takes the line', async () => {
    const { lineId, attemptId } = await pendingLine('org-q4');
    await aged(attemptId, 71);
    await workers.pollSupplierTasksNow();
    expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe('in-progress');
    await aged(attemptId, 73);
    await workers.pollSupplierTasksNow();
    expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe('reconciliation-required');
    const attempt = await env.db('supplier_attempts').where({ id: attemptId }).first();
    expect(attempt.status).toBe('unknown');
    expect(JSON.stringify(attempt.detail)).toMatch(/has not finished task .* in 73 hours \(it says submitted\)/);
    expect((await walletAndLedger(env, 'org-q4')).consistent).toBe(true);
  }, 60_000);

  test('a seller that cannot be asked about its task is asked again until the wait is over, then a person takes the line', async () => {
    const { lineId, attemptId } = await pendingLine('org-q5');
    await seller.down();
    try {
      await aged(attemptId, 10);
      await workers.pollSupplierTasksNow();
      expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe('in-progress');
      await aged(attemptId, 80);
      await workers.pollSupplierTasksNow();
      expect((await env.db('booking_lines').where({ id: lineId }).first()).status).toBe('reconciliation-required');
      const attempt = await env.db('supplier_attempts').where({ id: attemptId }).first();
      expect(JSON.stringify(attempt.detail)).toMatch(/could not be asked about it for 80 hours/);
    } finally {
      seller.up();
    }
  }, 60_000);
});
