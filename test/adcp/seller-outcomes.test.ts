import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import type { BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { FAILURE_REASON, productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import type { RunningWorkers } from '../../workers/main';

/**
 * The outcomes a seller can choose, through the whole engine: our test seller answers per product
 * (docs/adcp.md, "Booking"), and each line must land where the table says, with the seller's words.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;

beforeAll(async () => {
  // The booking timeout leaves ordinary calls room on a busy machine; the slow product outlasts it well.
  seller = await startTestSeller({ slowMs: 7_000 });
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    ADCP_TASK_POLL_INTERVAL_MS: '3600000',
    SUPPLIER_TIMEOUT_MS: '4000',
    WORKER_QUEUES: 'supplier.adcp-ctl',
  });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

async function lineOf(token: string, bookingId: string) {
  const res = await api.fetch(`/api/v1/bookings/${bookingId}`, { token });
  return res.status === 200 ? (await json<{ booking: BookingBody }>(res)).booking.lines[0]! : null;
}

/** Polls tasks/get now, as a poll interval gone by would. */
async function pollNow(lineId: string) {
  await env.db('supplier_tasks').where({ line_id: lineId, status: 'pending' }).update({ next_poll_at: env.db.fn.now() });
  await workers.pollSupplierTasksNow();
}

/** Launches a line on the product and waits until the seller holds it as a task (submitted). */
async function submitted(org: string, productId: string) {
  const { token, booking } = await launchOnSeller(env, api, org, 'adcp-ctl', productRef(productId));
  const lineId = booking.lines[0]!.id;
  let task: { task_id: string; attempt_id: string } | undefined;
  await until('the seller answers submitted', async () => {
    task = await env.db('supplier_tasks').where({ line_id: lineId }).first();
    return !!task;
  });
  return { token, bookingId: booking.id, lineId, taskId: task!.task_id, attemptId: task!.attempt_id };
}

async function settled(token: string, bookingId: string, lineId: string, status: string, poll = true) {
  await until(`the line is ${status}`, async () => {
    if (poll) await pollNow(lineId);
    return (await lineOf(token, bookingId))?.status === status;
  });
  return (await lineOf(token, bookingId))!;
}

/**
 * Runs `body` while PostgreSQL refuses every update of one line with a real error (`errcode`
 * given, or a plain exception), whatever path makes it; the trigger is gone afterwards.
 */
async function whileLineRefused(lineId: string, errcode: string | null, body: () => Promise<void>) {
  const using = errcode ? ` using errcode = '${errcode}'` : '';
  await env.db.raw(
    `create function refuse_for_test() returns trigger language plpgsql as $$ begin raise exception 'refused'${using}; end $$`,
  );
  await env.db.raw(
    `create trigger refuse_one_line before update on booking_lines for each row when (old.id = '${lineId}'::uuid)
     execute function refuse_for_test()`,
  );
  try {
    await body();
  } finally {
    await env.db.raw('drop trigger refuse_one_line on booking_lines');
    await env.db.raw('drop function refuse_for_test()');
  }
}

describe("a seller's outcomes", () => {
  test("a task the seller fails: the line is rejected with the seller's reason, and its reservation released", async () => {
    const { token, bookingId, lineId, taskId, attemptId } = await submitted('org-o1', 'ctv_failed');
    seller.finish(taskId);
    await settled(token, bookingId, lineId, 'rejected');
    const attempt = await env.db('supplier_attempts').where({ id: attemptId }).first();
    expect(attempt.status).toBe('rejected');
    expect(JSON.stringify(attempt.detail)).toContain(FAILURE_REASON);
    const money = await walletAndLedger(env, 'org-o1');
    expect(money.consistent).toBe(true);
    expect(money.wallet.reservedMinor).toBe(0);
  }, 60_000);

  test('a seller refusing at once: rejected with its code and reason; no task is kept', async () => {
    const { token, booking } = await launchOnSeller(env, api, 'org-o2', 'adcp-ctl', productRef('ctv_refused'));
    const line = await settled(token, booking.id, booking.lines[0]!.id, 'rejected', false);
    const attempt = await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first();
    expect(JSON.stringify(attempt.detail)).toContain(`POLICY_VIOLATION: ${FAILURE_REASON}`);
    expect(await env.db('supplier_tasks').where({ line_id: line.id })).toHaveLength(0);
  }, 60_000);

  test('a task the seller reports as unknown sends the line to reconciliation', async () => {
    const { token, bookingId, lineId, attemptId } = await submitted('org-o3', 'ctv_unknown');
    await settled(token, bookingId, lineId, 'reconciliation-required');
    const attempt = await env.db('supplier_attempts').where({ id: attemptId }).first();
    expect(attempt.status).toBe('unknown');
    expect(JSON.stringify(attempt.detail)).toContain('as unknown');
  }, 60_000);

  test('a seller slower than the booking timeout: the outcome is unknown, and the line waits for a person', async () => {
    const before = seller.creates.length;
    const { token, booking } = await launchOnSeller(env, api, 'org-o4', 'adcp-ctl', productRef('ctv_slow'));
    const line = await settled(token, booking.id, booking.lines[0]!.id, 'reconciliation-required', false);
    // It did reach the seller, which may yet book it: exactly why a person must look.
    expect(seller.creates.length).toBeGreaterThan(before);
    const attempt = await env.db('supplier_attempts').where({ id: line.providerAttemptId }).first();
    expect(attempt.status).toBe('unknown');
    // The seller books it after all, late: the answer changes nothing (the line waits for a person).
    const buys = seller.buys.size;
    await until('the seller books it late', async () => seller.buys.size > buys);
    await new Promise((r) => setTimeout(r, 500));
    expect((await lineOf(token, booking.id))!.status).toBe('reconciliation-required');
  }, 60_000);

  test('a seller down while a booking is pending: the poll changes nothing and asks again; once it is back, the booking settles', async () => {
    const { token, bookingId, lineId, taskId } = await submitted('org-o5', 'ctv_async');
    await seller.down();
    try {
      await pollNow(lineId);
      expect((await lineOf(token, bookingId))!.status).toBe('in-progress');
      expect(await env.db('supplier_tasks').where({ line_id: lineId }).first()).toMatchObject({ status: 'pending' });
    } finally {
      seller.up();
    }
    seller.finish(taskId);
    const line = await settled(token, bookingId, lineId, 'confirmed');
    expect(line.providerReference).toMatch(/^mb_\w+\/pkg_\w+$/);
  }, 60_000);

  test("the database refusing one task's answer: the round goes on to the others, and that one settles at a later poll", async () => {
    const refused = await submitted('org-o6', 'ctv_async');
    const other = await submitted('org-o7', 'ctv_async');
    seller.finish(refused.taskId);
    seller.finish(other.taskId);
    // A real error from PostgreSQL on the one line's update, whatever order the round takes them in.
    await whileLineRefused(refused.lineId, null, async () => {
      await env.db('supplier_tasks').whereIn('line_id', [refused.lineId, other.lineId]).update({ next_poll_at: env.db.fn.now() });
      await workers.pollSupplierTasksNow();
      expect((await lineOf(other.token, other.bookingId))!.status).toBe('confirmed');
      expect((await lineOf(refused.token, refused.bookingId))!.status).toBe('in-progress');
      expect(await env.db('supplier_tasks').where({ line_id: refused.lineId }).first()).toMatchObject({ status: 'pending' });
    });
    await settled(refused.token, refused.bookingId, refused.lineId, 'confirmed');
  }, 60_000);

  test('the database down while an answer is recorded: the round ends and says so, and the task is asked again later', async () => {
    const task = await submitted('org-o8', 'ctv_async');
    seller.finish(task.taskId);
    // PostgreSQL's own "cannot connect now": an outage, which every other row of the round would meet too.
    await whileLineRefused(task.lineId, '57P03', async () => {
      await env.db('supplier_tasks').where({ line_id: task.lineId }).update({ next_poll_at: env.db.fn.now() });
      await expect(workers.pollSupplierTasksNow()).rejects.toMatchObject({ code: '57P03' });
      expect((await lineOf(task.token, task.bookingId))!.status).toBe('in-progress');
      expect(await env.db('supplier_tasks').where({ line_id: task.lineId }).first()).toMatchObject({ status: 'pending' });
    });
    await settled(task.token, task.bookingId, task.lineId, 'confirmed');
  }, 60_000);
});
