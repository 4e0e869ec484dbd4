import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post, type BookingBody } from '../support/bookings';
import { until } from '../support/wait';
import { walletAndLedger } from '../support/wallet';
import { launchOnSeller } from '../support/adcp-buy';
import { INPUT_QUESTION, productRef, startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import type { RunningWorkers } from '../../workers/main';

/**
 * A seller that needs a person (AdCP `input-required`) hands the line to staff: it waits in the
 * fulfilment queue with the seller's question, and staff answer the seller and record the outcome.
 */
const QUEUE = '/api/v1/internal/fulfilment/bookings';
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers;
let staff: string;

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  const sellers = sellersAt({ ctl: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
  workers = await env.workers({ ADCP_SELLERS: sellers, ADCP_TASK_POLL_INTERVAL_MS: '3600000', WORKER_QUEUES: 'supplier.adcp-ctl' });
  await grantStaff(env.staff, 'staff-1');
  for (const org of ['org-i1', 'org-i2', 'org-i3']) await assignClient(env.staff, 'staff-1', org);
  staff = await env.issuer.token({ org: 'staff-org', user: 'staff-1' });
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await env?.close();
  await seller?.stop();
});

type Line = BookingBody['lines'][number];

/** A live line on the product, polled until its task leaves `pending` (or the check holds). */
async function launched(org: string, productId: string) {
  const { token, booking } = await launchOnSeller(env, api, org, 'adcp-ctl', productRef(productId));
  const lineId = booking.lines[0]!.id;
  await until('the seller answers submitted', async () => !!(await env.db('supplier_tasks').where({ line_id: lineId }).first()));
  return { token, bookingId: booking.id, lineId };
}

async function handedToStaff(org: string) {
  const ids = await launched(org, 'ctv_input');
  await until('the poll hears input-required', async () => {
    await env.db('supplier_tasks').where({ line_id: ids.lineId, status: 'pending' }).update({ next_poll_at: env.db.fn.now() });
    await workers.pollSupplierTasksNow();
    return (await env.db('booking_lines').where({ id: ids.lineId }).first()).workflow_steps !== null;
  });
  return ids;
}

async function staffLine(bookingId: string, lineId: string): Promise<Line> {
  const res = await api.fetch(`${QUEUE}?status=all`, { token: staff });
  expect(res.status).toBe(200);
  const { bookings } = await json<{ bookings: BookingBody[] }>(res);
  return bookings.find((b) => b.id === bookingId)!.lines.find((l) => l.id === lineId)!;
}

const op = (bookingId: string, lineId: string, name: string, body: unknown) =>
  post(api, staff, `${QUEUE}/${bookingId}/lines/${lineId}/${name}`, body);

describe('a seller that needs input', () => {
  test("the line waits in the fulfilment queue with the seller's question; staff claim it and confirm it with the seller's media buy", async () => {
    const { token, bookingId, lineId } = await handedToStaff('org-i1');
    const queued = await staffLine(bookingId, lineId);
    expect(queued.status).toBe('in-progress');
    expect(JSON.stringify(queued.workflowSteps)).toContain(INPUT_QUESTION);
    // The task is over for polling: the seller waits for a person now.
    expect(await env.db('supplier_tasks').where({ line_id: lineId }).first()).toMatchObject({ status: 'done' });
    const active = await api.fetch(QUEUE, { token: staff });
    expect((await json<{ bookings: BookingBody[] }>(active)).bookings.map((b) => b.id)).toContain(bookingId);

    const claimed = await op(bookingId, lineId, 'claim', { expectedVersion: queued.version });
    expect(claimed.status).toBe(200);
    const afterClaim = (await json<{ booking: BookingBody }>(claimed)).booking.lines[0]!;
    expect(afterClaim.claimedBy).toBe('staff-1');
    const confirmed = await op(bookingId, lineId, 'confirm', {
      expectedVersion: afterClaim.version,
      providerReference: 'mb_manual/pkg_manual',
      evidence: 'The seller booked it once the signed IO arrived (their email of today).',
    });
    expect(confirmed.status).toBe(200);
    const line = (await json<{ booking: BookingBody }>(confirmed)).booking.lines[0]!;
    expect(line).toMatchObject({ status: 'confirmed', providerReference: 'mb_manual/pkg_manual' });
    // The buyer sees it confirmed too.
    const mine = await json<{ booking: BookingBody }>(await api.fetch(`/api/v1/bookings/${bookingId}`, { token }));
    expect(mine.booking.lines[0]!.status).toBe('confirmed');
    expect((await walletAndLedger(env, 'org-i1')).consistent).toBe(true);
  }, 60_000);

  test("staff may reject it with the seller's reason: the reservation is released", async () => {
    const { bookingId, lineId } = await handedToStaff('org-i2');
    const queued = await staffLine(bookingId, lineId);
    const claimed = await json<{ booking: BookingBody }>(await op(bookingId, lineId, 'claim', { expectedVersion: queued.version }));
    const rejected = await op(bookingId, lineId, 'reject', {
      expectedVersion: claimed.booking.lines[0]!.version,
      evidence: 'The seller will not book without a category exemption.',
    });
    expect(rejected.status).toBe(200);
    expect((await json<{ booking: BookingBody }>(rejected)).booking.lines[0]!.status).toBe('rejected');
    const money = await walletAndLedger(env, 'org-i2');
    expect(money.consistent).toBe(true);
    expect(money.wallet.reservedMinor).toBe(0);
  }, 60_000);

  test('a line the seller is still working on is not staff work: claiming it is refused and changes nothing', async () => {
    const { bookingId, lineId } = await launched('org-i3', 'ctv_async');
    const before = await env.db('booking_lines').where({ id: lineId }).first();
    const res = await op(bookingId, lineId, 'claim', { expectedVersion: before.version });
    expect(res.status).toBe(409);
    expect((await json<{ code: string }>(res)).code).toBe('not_a_workflow_line');
    expect(await env.db('booking_lines').where({ id: lineId }).first()).toEqual(before);
    seller.finish();
  }, 60_000);
});
