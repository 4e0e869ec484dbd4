import { sellersAt } from '../support/adcp-env';
import { randomUUID } from 'node:crypto';
import { signWebhook } from '@adcp/sdk/signing/client';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post, type BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { FAILURE_REASON, productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { parseAdcpReference } from '../../shared/adapters/adcp/outcomes';
import { addDays, dateOnly } from '../../shared/dates';
import type { RunningWorkers } from '../../workers/main';

/**
 * A seller that answers an in-flight change (update_media_buy) `submitted` is followed through
 * its task, as a booking it finishes later is: the line waits in the change's in-flight status,
 * the task's final answer settles the change (polled, or pushed by the seller's signed webhook),
 * and a task that never finishes goes to a person. Polling is an hour away: a test polls itself.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let hookUrl: string;

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  // The same seller as a live one and a sandbox one, whose lines' answers may go in one statement.
  const sellers = sellersAt({ ctl: seller.agentUrl, 'acme-sandbox': seller.agentUrl }, { ctl: seller.jwksUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  hookUrl = `${api.deps.urls.base}/api/v1/adapters/adcp-ctl/webhooks`;
  workers = await env.workers({
    ADCP_SELLERS: sellers,
    PUBLIC_BASE_URL: api.deps.urls.base,
    ADCP_TASK_POLL_INTERVAL_MS: '3600000',
    WORKER_QUEUES: 'supplier.adcp-ctl,supplier.adcp-acme-sandbox',
  });
}, 60_000);
afterEach(() => {
  seller.updateTasks = null;
});
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

const lineRow = (lineId: string) => env.db('booking_lines').where({ id: lineId }).first();

/** A line the seller booked at once, running: live, unless on the sandbox seller. */
async function runningLine(org: string, adapterKey = 'adcp-ctl') {
  const today = dateOnly(new Date());
  const mode = adapterKey === 'adcp-ctl' ? {} : { executionMode: 'sandbox' as const, startDate: today, endDate: addDays(today, 19) };
  // Room above the budget, so a raise fits within the maximum commitment.
  const { token, booking } = await launchOnSeller(env, api, org, adapterKey, productRef('ctv_sync'), {
    maximumCommitmentMinor: 200_000,
    ...mode,
  });
  const lineId = booking.lines[0]!.id;
  await until('the line is confirmed', async () => (await lineRow(lineId)).status === 'confirmed');
  const line = await lineRow(lineId);
  return {
    org,
    token,
    bookingId: booking.id,
    campaignId: booking.campaignId,
    lineId,
    mediaBuyId: parseAdcpReference(line.provider_reference).mediaBuyId,
  };
}
type Running = Awaited<ReturnType<typeof runningLine>>;

/** Asks for a pause or stop through the API; the seller answers it `submitted`. */
async function control(r: Running, what: 'pause' | 'stop') {
  const line = await lineRow(r.lineId);
  const res = await post(api, r.token, `/api/v1/bookings/${r.bookingId}/lines/${r.lineId}/${what}`, { expectedVersion: line.version });
  expect(res.status).toBe(202);
  return waitingTask(r);
}

/** The task the line's change waits on, once the seller has answered `submitted`. */
async function waitingTask(r: Running) {
  let task: { attempt_id: string; task_id: string; operation_id: string; operation: { kind: string } } | undefined;
  await until('the seller answers submitted', async () => {
    task = await env.db('supplier_tasks').where({ line_id: r.lineId }).whereNotNull('operation_id').first();
    return !!task;
  });
  return task!;
}

/** One poll round, as if a poll interval had gone by. */
async function pollNow(attemptId: string) {
  await env.db('supplier_tasks').where({ attempt_id: attemptId }).update({ next_poll_at: env.db.fn.now() });
  await workers.pollSupplierTasksNow();
}

describe('an in-flight change the seller is still working on', () => {
  test('a stop answered submitted waits stopping; its task completing stops the line, read back, its verification starting then', async () => {
    const r = await runningLine('org-ip1');
    seller.updateTasks = 'complete';
    const task = await control(r, 'stop');
    expect(task.operation).toMatchObject({ kind: 'stop' });
    // The line waits on the task: stopping, its stop in flight, its attempt closed as pending.
    expect(await lineRow(r.lineId)).toMatchObject({ status: 'stopping', operation_id: task.operation_id });
    expect(await env.db('line_operations').where({ id: task.operation_id }).first()).toMatchObject({
      status: 'in-flight',
      effective_at: null,
    });
    expect(await env.db('supplier_attempts').where({ id: task.attempt_id }).first()).toMatchObject({
      operation: 'stop',
      status: 'pending',
    });
    // Still working: a poll only notes it.
    await pollNow(task.attempt_id);
    expect((await lineRow(r.lineId)).status).toBe('stopping');
    expect(seller.buys.get(r.mediaBuyId)!.status).not.toBe('canceled');

    const finishedAt = new Date();
    seller.finish(task.task_id);
    await until('the poll stops the line', async () => {
      await pollNow(task.attempt_id);
      return (await lineRow(r.lineId)).status === 'stopped';
    });
    expect(seller.buys.get(r.mediaBuyId)!.status).toBe('canceled');
    expect(await env.db('supplier_tasks').where({ attempt_id: task.attempt_id }).first()).toMatchObject({ status: 'done' });
    const attempt = await env.db('supplier_attempts').where({ id: task.attempt_id }).first();
    expect(attempt).toMatchObject({ status: 'applied' });
    expect(attempt.detail).toMatchObject({ kind: 'applied', detail: { readBack: { status: 'canceled' }, drift: [] } });
    // Verified control starts from the moment the stop was applied, not from when it was sent.
    const op = await env.db('line_operations').where({ id: task.operation_id }).first();
    expect(op).toMatchObject({ status: 'applied', verification: 'pending' });
    expect(new Date(op.effective_at).getTime()).toBeGreaterThanOrEqual(finishedAt.getTime() - 1000);
    const events = await env.db('booking_events').where({ line_id: r.lineId }).orderBy('id').pluck('action');
    expect(events).toEqual(expect.arrayContaining(['line.stop-started', 'line.supplier-pending', 'line.stopped']));
    // A later answer (a duplicate poll) changes nothing.
    await pollNow(task.attempt_id);
    expect((await lineRow(r.lineId)).status).toBe('stopped');
    expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
  }, 90_000);

  test('a pause answered submitted whose task then fails is refused: the line runs on, confirmed', async () => {
    const r = await runningLine('org-ip2');
    seller.updateTasks = 'fail';
    const task = await control(r, 'pause');
    expect(await lineRow(r.lineId)).toMatchObject({ status: 'stopping' });
    seller.finish(task.task_id);
    await until('the poll refuses the pause', async () => {
      await pollNow(task.attempt_id);
      return (await lineRow(r.lineId)).status === 'confirmed';
    });
    const line = await lineRow(r.lineId);
    expect(line).toMatchObject({ operation_id: null, stop: null });
    const op = await env.db('line_operations').where({ id: task.operation_id }).first();
    expect(op.status).toBe('refused');
    expect(op.reason).toContain(FAILURE_REASON);
    expect(await env.db('supplier_attempts').where({ id: task.attempt_id }).first()).toMatchObject({ status: 'refused' });
    expect(seller.buys.get(r.mediaBuyId)!.packages[0]!.paused).toBe(false);
    expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
  }, 90_000);

  test("a sandbox line's pause answered submitted is not taken for a refusal by the batched answer: it waits, then is applied", async () => {
    const r = await runningLine('org-ip6', 'adcp-acme-sandbox');
    seller.updateTasks = 'complete';
    const task = await control(r, 'pause');
    expect(await lineRow(r.lineId)).toMatchObject({ status: 'stopping', execution_mode: 'sandbox' });
    expect(await env.db('line_operations').where({ id: task.operation_id }).first()).toMatchObject({ status: 'in-flight' });
    seller.finish(task.task_id);
    await until('the poll pauses the line', async () => {
      await pollNow(task.attempt_id);
      return (await lineRow(r.lineId)).status === 'stopped';
    });
    expect(await env.db('line_operations').where({ id: task.operation_id }).first()).toMatchObject({ status: 'applied' });
    expect(seller.buys.get(r.mediaBuyId)!.packages[0]!.paused).toBe(true);
  }, 90_000);

  test('a budget cut answered submitted releases money only when its task completes, as if answered at once', async () => {
    const r = await runningLine('org-ip3');
    seller.updateTasks = 'complete';
    const booking = (await json<{ booking: BookingBody }>(await api.fetch(`/api/v1/bookings/${r.bookingId}`, { token: r.token }))).booking;
    const before = await walletAndLedger(env, r.org);
    const amended = await api.fetch(`/api/v1/campaigns/${r.campaignId}/amendments`, {
      method: 'POST',
      token: r.token,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ expectedVersion: booking.version, lines: [{ lineId: r.lineId, budgetMinor: 60_000 }] }),
    });
    expect(amended.status).toBe(202);
    const task = await waitingTask(r);
    expect(task.operation).toMatchObject({ kind: 'change-budget', request: { newBudgetMinor: 60_000 } });
    // Waiting: the line runs at its old budget, nothing released yet.
    expect(await lineRow(r.lineId)).toMatchObject({ status: 'confirmed', operation_id: task.operation_id });
    expect(Number((await lineRow(r.lineId)).budget_minor)).toBe(100_000);
    expect((await walletAndLedger(env, r.org)).wallet.reservedMinor).toBe(before.wallet.reservedMinor);

    seller.finish(task.task_id);
    await until('the poll applies the budget change', async () => {
      await pollNow(task.attempt_id);
      return (await env.db('line_operations').where({ id: task.operation_id }).first()).status === 'applied';
    });
    expect(Number((await lineRow(r.lineId)).budget_minor)).toBe(60_000);
    expect(seller.buys.get(r.mediaBuyId)!.packages[0]!.budget).toBe(600);
    const after = await walletAndLedger(env, r.org);
    expect(after.consistent).toBe(true);
    expect(after.wallet.reservedMinor).toBe(before.wallet.reservedMinor - 40_000);
    const attempt = await env.db('supplier_attempts').where({ id: task.attempt_id }).first();
    expect(attempt.detail).toMatchObject({ kind: 'applied', detail: { readBack: { budget: 600 }, drift: [] } });
  }, 90_000);

  test('a change whose task is never finished is waited on for ADCP_TASK_MAX_WAIT_HOURS (72), then a person takes the line', async () => {
    const r = await runningLine('org-ip4');
    seller.updateTasks = 'complete';
    const task = await control(r, 'pause');
    const aged = (hours: number) =>
      env
        .db('supplier_tasks')
        .where({ attempt_id: task.attempt_id })
        .update({ created_at: env.db.raw(`now() - interval '${hours} hours'`), next_poll_at: env.db.fn.now() });
    await aged(71);
    await workers.pollSupplierTasksNow();
    expect((await lineRow(r.lineId)).status).toBe('stopping');
    await aged(73);
    await workers.pollSupplierTasksNow();
    expect((await lineRow(r.lineId)).status).toBe('reconciliation-required');
    expect(await env.db('line_operations').where({ id: task.operation_id }).first()).toMatchObject({ status: 'reconciliation-required' });
    const attempt = await env.db('supplier_attempts').where({ id: task.attempt_id }).first();
    expect(attempt.status).toBe('unknown');
    expect(JSON.stringify(attempt.detail)).toMatch(/has not finished task .* in 73 hours \(it says submitted\)/);
    expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
  }, 90_000);

  test("the seller's signed webhook settles a change it finished, with no poll: the update asked for it; a second push changes nothing", async () => {
    const r = await runningLine('org-ip5');
    seller.updateTasks = 'complete';
    const task = await control(r, 'pause');
    const update = seller.updates.filter((u) => u.mediaBuyId === r.mediaBuyId).at(-1)!;
    expect(update.patch.push_notification_config).toEqual({ url: hookUrl });
    const deliver = async () => {
      const body = JSON.stringify({
        idempotency_key: randomUUID(),
        task_id: task.task_id,
        task_type: 'update_media_buy',
        status: 'completed',
        timestamp: new Date().toISOString(),
        protocol: 'media-buy',
        result: { media_buy_id: r.mediaBuyId, status: 'paused' },
      });
      const request = { method: 'POST', url: hookUrl, headers: { 'content-type': 'application/json' }, body };
      const { headers } = signWebhook(request, seller.signingKey as never, {});
      const res = await fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      expect(res.status).toBe(200);
      return ((await res.json()) as { result: string }).result;
    };
    // The seller carries the change out, then pushes its task's completion.
    seller.finish(task.task_id);
    await until('the seller pauses the buy', async () => seller.buys.get(r.mediaBuyId)!.packages[0]!.paused);
    expect(await deliver()).toBe('settled');
    // Read back as a polled answer is: the seller shows the buy paused.
    const attempt = await env.db('supplier_attempts').where({ id: task.attempt_id }).first();
    expect(attempt).toMatchObject({ status: 'applied' });
    expect(attempt.detail).toMatchObject({ kind: 'applied', detail: { readBack: { status: 'paused', paused: true }, drift: [] } });
    expect(await lineRow(r.lineId)).toMatchObject({ status: 'stopped', operation_id: null });
    expect(await env.db('line_operations').where({ id: task.operation_id }).first()).toMatchObject({
      status: 'applied',
      verification: 'pending',
    });
    expect(await env.db('supplier_tasks').where({ attempt_id: task.attempt_id }).first()).toMatchObject({ status: 'done', polls: 0 });
    expect(await deliver()).toBe('already-settled');
    expect((await lineRow(r.lineId)).status).toBe('stopped');
    expect((await walletAndLedger(env, r.org)).consistent).toBe(true);
  }, 90_000);
});
