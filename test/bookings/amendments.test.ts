import { randomUUID } from 'node:crypto';
import { createTestEnv, expectProblem, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, launchPlan, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { post as postEntry } from '../../shared/wallet/ledger';
import { makeCreative } from '../support/creatives';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';

let env: TestEnv;
let api: TestApi;
let staff: string;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ WORKER_QUEUES: 'suppliers,housekeeping' });
  await grantStaff(env.staff, 'staff-amend');
  for (const org of ['org-live', 'org-poor', 'org-spent', 'org-refuse']) await assignClient(env.staff, 'staff-amend', org);
  staff = await env.issuer.token({ org: 'staff-org', user: 'staff-amend' });
});
afterAll(() => env.close());

interface Amendment {
  id: string;
  status: string;
  increaseMinor: number;
  endDateTo: string | null;
  lines: Array<{ lineId: string; status: string; budgetFromMinor: number; budgetToMinor: number; reason: string | null }>;
}

const amend = (token: string, campaignId: string, body: unknown, key: string = randomUUID()) =>
  api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
const amendments = async (token: string, campaignId: string) =>
  (await json<{ amendments: Amendment[] }>(await api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, { token }))).amendments;

async function runningSandbox(budgets: number[], org = 'org-a') {
  const channels = ['ctv', 'audio', 'tv'];
  const launched = await launchPlan(
    env,
    api,
    budgets.map((budgetMinor, i) => ({ channel: channels[i]!, adapterKey: `sandbox-${channels[i]}`, budgetMinor })),
    org,
    // Room above the budget: amendments may raise lines up to the maximum commitment, not past it.
    { endDate: '2099-03-31', maximumCommitmentMinor: 2 * budgets.reduce((a, b) => a + b, 0) },
  );
  const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
  return { ...launched, booking };
}

const untouched = async (bookingId: string) => ({
  amendments: Number((await env.db('booking_amendments').where({ booking_id: bookingId }).count('* as n'))[0]!.n),
  operations: Number((await env.db('line_operations').where({ booking_id: bookingId }).count('* as n'))[0]!.n),
  lines: await env
    .db('booking_lines')
    .where({ booking_id: bookingId })
    .orderBy('id')
    .select('id', 'budget_minor', 'version', 'operation_id'),
  outbox: Number((await env.db('outbox').whereRaw("payload->>'bookingId' = ?", [bookingId]).count('* as n'))[0]!.n),
});

describe('amending a running sandbox campaign', () => {
  test('a budget change goes through each changed line’s supplier, once, and the amendment reads applied', async () => {
    const { booking, campaignId, token } = await runningSandbox([10_000, 20_000]);
    const [a, b] = booking.lines;
    const res = await amend(token, campaignId, {
      expectedVersion: booking.version,
      lines: [{ lineId: a!.id, budgetMinor: 15_000 }],
      note: 'Shift to ctv',
    });
    expect(res.status).toBe(202);
    const { amendment } = await json<{ amendment: Amendment }>(res);
    expect(amendment).toMatchObject({ status: 'in-flight', increaseMinor: 0 });
    expect(amendment.lines).toEqual([
      expect.objectContaining({ lineId: a!.id, status: 'requested', budgetFromMinor: 10_000, budgetToMinor: 15_000 }),
    ]);
    const after = await waitForBooking(api, token, booking.id, (x) => x.lines[0]!.budgetMinor === 15_000);
    expect(after.lines[0]).toMatchObject({ status: 'confirmed', budgetMinor: 15_000 });
    expect((after.lines[0] as unknown as { pendingOperation: unknown }).pendingOperation).toBeNull();
    expect(after.lines[1]).toMatchObject({ budgetMinor: 20_000 });
    const [listed] = await amendments(token, campaignId);
    expect(listed).toMatchObject({ id: amendment.id, status: 'applied', lines: [expect.objectContaining({ status: 'applied' })] });
    const sent = await env.db('sandbox_ledger').where({ line_id: a!.id, operation: 'change-budget' });
    expect(sent).toHaveLength(1);
    expect(sent[0].request).toMatchObject({ newBudgetMinor: 15_000, budgetMinor: 10_000 });
    expect(await env.db('sandbox_ledger').where({ line_id: b!.id, operation: 'change-budget' })).toHaveLength(0);
  });

  test('a new end date is told to every running line and, once all took it, moves the campaign’s end', async () => {
    const { booking, campaignId, token } = await runningSandbox([10_000, 10_100]);
    const res = await amend(token, campaignId, { expectedVersion: booking.version, lines: [], endDate: '2099-04-15' });
    expect(res.status).toBe(202);
    await waitForBooking(api, token, booking.id, (x) => x.endDate === '2099-04-15');
    for (const l of booking.lines) {
      const [sent] = await env.db('sandbox_ledger').where({ line_id: l.id, operation: 'change-budget' });
      expect(sent.request).toMatchObject({ newEndDate: '2099-04-15', newBudgetMinor: l.budgetMinor });
    }
    expect((await amendments(token, campaignId))[0]).toMatchObject({ status: 'applied', endDateTo: '2099-04-15' });
  });

  test('a refused change (…91) leaves the old budget; a lost answer (…92) goes to reconciliation and is resolved from evidence', async () => {
    const { booking, campaignId, token } = await runningSandbox([10_000, 10_000], 'org-refuse');
    const [a, b] = booking.lines;
    const res = await amend(token, campaignId, {
      expectedVersion: booking.version,
      lines: [
        { lineId: a!.id, budgetMinor: 12_091 },
        { lineId: b!.id, budgetMinor: 12_092 },
      ],
    });
    expect(res.status).toBe(202);
    const after = await waitForBooking(
      api,
      token,
      booking.id,
      (x) =>
        x.lines[1]!.status === 'reconciliation-required' &&
        (x.lines[0] as unknown as { pendingOperation: unknown }).pendingOperation === null,
    );
    expect(after.lines[0]).toMatchObject({
      status: 'confirmed',
      budgetMinor: 10_000,
      evidence: expect.stringMatching(/refused the change-budget/),
    });
    expect(after.lines[1]).toMatchObject({ budgetMinor: 10_000, pendingOperation: 'change-budget' });
    expect((await amendments(token, campaignId))[0]!.status).toBe('reconciliation-required');
    const line = after.lines[1]!;
    const resolved = await post(api, staff, `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${line.id}/resolve`, {
      expectedVersion: line.version,
      outcome: 'applied',
      evidence: 'The supplier confirms the new budget by email.',
    });
    expect(resolved.status).toBe(200);
    const settled = await readBooking(api, token, booking.id);
    expect(settled.lines[1]).toMatchObject({ status: 'confirmed', budgetMinor: 12_092, pendingOperation: null });
    expect((await amendments(token, campaignId))[0]!.status).toBe('partially-applied');
  });

  test('a stale version, a line not in the booking, nothing to change, a missing key or a bad body: refused, nothing written', async () => {
    const { booking, campaignId, token } = await runningSandbox([10_000]);
    const line = booking.lines[0]!;
    const before = await untouched(booking.id);
    await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version - 1, lines: [{ lineId: line.id, budgetMinor: 11_000 }] }),
      409,
      'version_conflict',
    );
    await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version, lines: [{ lineId: randomUUID(), budgetMinor: 11_000 }] }),
      400,
      'unknown_line',
    );
    await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version, lines: [{ lineId: line.id, budgetMinor: line.budgetMinor }] }),
      400,
      'nothing_to_change',
    );
    await expectProblem(await amend(token, campaignId, { expectedVersion: booking.version, lines: [] }), 400, 'validation_failed');
    await expectProblem(
      await amend(token, campaignId, {
        expectedVersion: booking.version,
        lines: [
          { lineId: line.id, budgetMinor: 11_000 },
          { lineId: line.id, budgetMinor: 12_000 },
        ],
      }),
      400,
    );
    await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version, lines: [{ lineId: line.id, budgetMinor: -1 }] }),
      400,
    );
    await expectProblem(await amend(token, campaignId, { expectedVersion: booking.version, lines: [], endDate: '2000-01-01' }), 400);
    await expectProblem(await amend(token, campaignId, { expectedVersion: booking.version, lines: [], endDate: '31/12/2099' }), 400);
    await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version, lines: [], endDate: '2099-05-01', extra: true }),
      400,
    );
    const noKey = await api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ expectedVersion: booking.version, lines: [{ lineId: line.id, budgetMinor: 11_000 }] }),
    });
    await expectProblem(noKey, 400);
    const other = await env.issuer.token({ org: 'org-z', user: 'z' });
    await expectProblem(
      await amend(other, campaignId, { expectedVersion: booking.version, lines: [{ lineId: line.id, budgetMinor: 11_000 }] }),
      404,
      'not_found',
    );
    await expectProblem(await api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, { token: other }), 404, 'not_found');
    expect(await untouched(booking.id)).toEqual(before);
  });

  test('the same key and body replays the first answer; twenty amendments at one version make one, one operation per line', async () => {
    const { booking, campaignId, token } = await runningSandbox([10_000, 10_000]);
    const body = { expectedVersion: booking.version, lines: booking.lines.map((l) => ({ lineId: l.id, budgetMinor: 13_000 })) };
    const key = randomUUID();
    const first = await amend(token, campaignId, body, key);
    const replay = await amend(token, campaignId, body, key);
    expect([first.status, replay.status]).toEqual([202, 202]);
    expect(await replay.text()).toBe(await first.text());
    await waitForBooking(api, token, booking.id, (x) => x.lines.every((l) => l.budgetMinor === 13_000));

    const current = await readBooking(api, token, booking.id);
    const race = { expectedVersion: current.version, lines: current.lines.map((l) => ({ lineId: l.id, budgetMinor: 14_000 })) };
    const answers = await Promise.all(Array.from({ length: 20 }, () => amend(token, campaignId, race)));
    expect(answers.filter((r) => r.status === 202)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 202)) await expectProblem(r, 409);
    await waitForBooking(api, token, booking.id, (x) => x.lines.every((l) => l.budgetMinor === 14_000));
    for (const l of booking.lines) {
      expect(await env.db('line_operations').where({ line_id: l.id, kind: 'change-budget' })).toHaveLength(2);
      expect(await env.db('sandbox_ledger').where({ line_id: l.id, operation: 'change-budget' })).toHaveLength(2);
    }
  });

  test('a line whose operation is in hand, or that is not running, cannot be amended', async () => {
    const { booking, campaignId, token } = await runningSandbox([10_000, 10_100]);
    expect((await post(api, token, `/api/v1/campaigns/${campaignId}/stop`)).status).toBe(202);
    const stopped = await waitForBooking(api, token, booking.id, (x) => x.lines.every((l) => l.status === 'stopped'));
    const refused = await expectProblem(
      await amend(token, campaignId, { expectedVersion: stopped.version, lines: [{ lineId: stopped.lines[0]!.id, budgetMinor: 99 }] }),
      409,
    );
    expect(refused.code).toBe('not_booked');
  });
});

/** A live booking of one manual (workflow) line, confirmed by staff: its budget stays reserved until it delivers. */
async function liveManualLine(org: string, budgetMinor: number, funds: number, maximumCommitmentMinor = budgetMinor) {
  await fundWallet(env, org, funds);
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const creative = await makeCreative(api, token, 'ctv');
  const { campaignId, planVersion } = await draftCampaign(
    api,
    token,
    [{ channel: 'ctv', adapterKey: 'manual', budgetMinor, creativeIds: [creative.id] }],
    {
      executionMode: 'live',
      maximumCommitmentMinor,
    },
  );
  await approve(api, token, campaignId, planVersion);
  const launch = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  expect([launch.status, launch.status === 202 ? '' : await launch.text()]).toEqual([202, '']);
  const launched = await json<{ booking: BookingBody }>(launch);
  const lineId = launched.booking.lines[0]!.id;
  await work(token, launched.booking.id, lineId, 'confirm', { providerReference: 'IO-1', evidence: 'Signed insertion order.' });
  return { token, campaignId, bookingId: launched.booking.id, lineId };
}

/** Once the workflow supplier has handed the line's operation to staff, staff claim, start and finish it. */
async function work(token: string, bookingId: string, lineId: string, finish: 'confirm' | 'reject', body: Record<string, unknown>) {
  await waitForBooking(api, token, bookingId, (b) => (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null);
  const base = `/api/v1/internal/fulfilment/bookings/${bookingId}/lines/${lineId}`;
  const version = async () => (await readBooking(api, token, bookingId)).lines[0]!.version;
  expect((await post(api, staff, `${base}/claim`, { expectedVersion: await version() })).status).toBe(200);
  if (finish === 'confirm') expect((await post(api, staff, `${base}/start`, { expectedVersion: await version() })).status).toBe(200);
  const res = await post(api, staff, `${base}/${finish}`, { expectedVersion: await version(), ...body });
  expect(res.status).toBe(200);
}

describe('amending a live campaign moves money', () => {
  test('an increase holds its difference from the wallet; refused by the supplier, it comes back; each once', async () => {
    const { token, campaignId, bookingId, lineId } = await liveManualLine('org-live', 10_000, 30_000, 20_000);
    const before = await walletAndLedger(env, 'org-live');
    const booking = await readBooking(api, token, bookingId);
    const res = await amend(token, campaignId, { expectedVersion: booking.version, lines: [{ lineId, budgetMinor: 15_000 }] });
    expect(res.status).toBe(202);
    expect((await json<{ amendment: Amendment }>(res)).amendment.increaseMinor).toBe(5_000);
    const held = await walletAndLedger(env, 'org-live');
    expect(held.wallet.reservedMinor - before.wallet.reservedMinor).toBe(5_000);
    expect(held.consistent).toBe(true);
    // A workflow supplier: staff carry the change and record the supplier's refusal.
    await work(token, bookingId, lineId, 'reject', { evidence: 'The desk cannot add budget this month.' });
    const back = await walletAndLedger(env, 'org-live');
    expect(back.wallet).toEqual(before.wallet);
    expect(back.consistent).toBe(true);
    const op = await env.db('line_operations').where({ line_id: lineId, kind: 'change-budget' }).first('id');
    const entries = await env.db('wallet_entries').where({ subject_type: 'line_operation', subject_id: op.id }).orderBy('id');
    expect(entries.map((e) => [e.kind, e.amount_minor])).toEqual([
      ['reservation', '5000'],
      ['release', '5000'],
    ]);
    expect((await readBooking(api, token, bookingId)).lines[0]).toMatchObject({ budgetMinor: 10_000, status: 'confirmed' });
  });

  test('an increase the wallet cannot cover is 409 insufficient_funds and nothing is asked of anyone', async () => {
    const { token, campaignId, bookingId, lineId } = await liveManualLine('org-poor', 10_000, 13_000, 13_000);
    // Money held elsewhere since the launch: 500 is left beside the line's budget.
    await env.db.transaction((trx) =>
      postEntry(trx, {
        advertiserId: 'org-poor',
        kind: 'reservation',
        amountMinor: 2_500,
        subjectType: 'wallet',
        subjectId: 'held-elsewhere',
        actorId: 'test-setup',
      }),
    );
    const booking = await readBooking(api, token, bookingId);
    const before = await untouched(bookingId);
    const wallet = await walletAndLedger(env, 'org-poor');
    await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version, lines: [{ lineId, budgetMinor: 12_001 }] }),
      409,
      'insufficient_funds',
    );
    expect(await untouched(bookingId)).toEqual(before);
    expect((await walletAndLedger(env, 'org-poor')).wallet).toEqual(wallet.wallet);
  });

  test('a budget below what the line has already spent is refused', async () => {
    const { token, campaignId, bookingId, lineId } = await liveManualLine('org-spent', 10_000, 20_000);
    // Staff enter the delivery the supplier reported: the whole budget, captured as spend.
    const entered = await post(api, staff, `/api/v1/internal/fulfilment/bookings/${bookingId}/lines/${lineId}/delivery`, {
      csv: 'date,impressions,clicks,completions,spend_minor\n2099-03-01,5000,50,0,6000\n2099-03-02,4000,40,0,4000',
    });
    expect(entered.status).toBe(200);
    const booking = await readBooking(api, token, bookingId);
    const refused = await expectProblem(
      await amend(token, campaignId, { expectedVersion: booking.version, lines: [{ lineId, budgetMinor: 9_000 }] }),
      409,
      'budget_below_spend',
    );
    expect(refused.detail).toMatch(/already spent 10000/);
  });
});
