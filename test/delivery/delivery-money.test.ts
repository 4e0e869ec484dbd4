import { createTestEnv, type TestEnv } from '../support/api';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { liveBooking } from '../billing/support';
import { confirmLines, day, report } from './support';
import { closeOutBooking, closeoutDue } from '../../shared/delivery/closeout';
import { settleFinality } from '../../shared/delivery/finality';
import { findBookingById } from '../../shared/bookings/booking-store';
import { changeLine } from '../../shared/bookings/lines/store';
import { SYSTEM } from '../../shared/auth/actor';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

let n = 0;
/** A funded live booking with confirmed lines: its commitment reserved, nothing captured yet. */
async function running(budgets: number[], commitment = budgets.reduce((s, b) => s + b, 0)) {
  const org = `org-money-${++n}`;
  await fundWallet(env, org, 1_000_000);
  const { bookingId, lineIds } = await liveBooking(env, org, budgets, commitment);
  await confirmLines(env, bookingId, lineIds);
  const line = (i: number) => ({ lineId: lineIds[i]!, bookingId, advertiserId: org });
  return { org, bookingId, lineIds, line };
}

const entries = (lineId: string) =>
  env.db('wallet_entries').where({ line_id: lineId }).orderBy('id').select('kind', 'amount_minor', 'subject_type');
const amount = (rows: Array<{ kind: string; amount_minor: string }>, kind: string) =>
  rows.filter((r) => r.kind === kind).reduce((s, r) => s + Number(r.amount_minor), 0);

describe('spend is captured from delivery, not at confirmation', () => {
  test('a confirmed line keeps its whole budget reserved and captures nothing until it delivers', async () => {
    const { org, lineIds } = await running([50_000]);
    expect(await entries(lineIds[0]!)).toEqual([]);
    const { wallet, consistent } = await walletAndLedger(env, org);
    expect(consistent).toBe(true);
    expect(wallet).toMatchObject({ balanceMinor: 1_000_000, reservedMinor: 50_000, availableMinor: 950_000 });
  });

  test('a restatement captures or gives back exactly the difference, once per figure, with the fee on it', async () => {
    const { org, line } = await running([50_000]);
    const first = await report(env, line(0), [day('2099-03-01', 10_000)]);
    expect(first.moved).toBe(10_000);
    // Restated down: 2,000 goes back to the reservation, and 10% of it comes off the fees.
    const down = await report(env, line(0), [day('2099-03-01', 8_000)]);
    expect(down.moved).toBe(-2_000);
    // The same figure again: stored once, no revision, no money.
    const again = await report(env, line(0), [day('2099-03-01', 8_000)]);
    expect(again.changed).toEqual([]);
    expect(again.moved).toBe(0);
    const up = await report(env, line(0), [day('2099-03-01', 8_000), day('2099-03-02', 7_000)]);
    expect(up.moved).toBe(7_000);

    const rows = await entries(line(0).lineId);
    expect(rows.map((r) => [r.kind, Number(r.amount_minor)])).toEqual([
      ['capture', 10_000],
      ['management_fee', 1_000],
      ['capture_reversal', 2_000],
      ['fee_credit', 200],
      ['capture', 7_000],
      ['management_fee', 700],
    ]);
    expect(amount(rows, 'capture') - amount(rows, 'capture_reversal')).toBe(15_000);
    expect(amount(rows, 'management_fee') - amount(rows, 'fee_credit')).toBe(1_500);
    const { wallet, consistent } = await walletAndLedger(env, org);
    expect(consistent).toBe(true);
    expect(wallet).toMatchObject({ balanceMinor: 1_000_000 - 15_000, reservedMinor: 50_000 - 15_000 });

    // Every figure the day ever had is kept, in order.
    const revisions = await env
      .db('delivery_revisions')
      .where({ line_id: line(0).lineId })
      .whereRaw("day = '2099-03-01'")
      .orderBy('revision')
      .select('revision', 'spend_minor');
    expect(revisions.map((r) => [r.revision, Number(r.spend_minor)])).toEqual([
      [1, 10_000],
      [2, 8_000],
    ]);
  });

  test('over-delivery is recorded but never billed beyond the budget', async () => {
    const { org, line } = await running([20_000]);
    await report(env, line(0), [day('2099-03-01', 15_000), day('2099-03-02', 11_000)]);
    const rows = await entries(line(0).lineId);
    expect(amount(rows, 'capture')).toBe(20_000);
    const stored = await env
      .db('delivery_days')
      .where({ line_id: line(0).lineId })
      .sum({ s: 'spend_minor' });
    expect(Number(stored[0]!.s)).toBe(26_000);
    expect((await walletAndLedger(env, org)).wallet.reservedMinor).toBe(0);
  });

  test('closeout releases exactly what the flight did not spend, once, and the booking says it is closed out', async () => {
    const { org, bookingId, line } = await running([30_000, 20_000], 60_000);
    // The booking became confirmed: only the headroom over the lines' budgets went back.
    expect((await walletAndLedger(env, org)).wallet.reservedMinor).toBe(50_000);
    await report(env, line(0), [day('2099-03-30', 12_000)]);
    await report(env, line(1), [day('2099-03-31', 5_000)]);
    expect((await walletAndLedger(env, org)).wallet.reservedMinor).toBe(33_000);

    // Not due while the restatement window is open, nor while a day is not final; due once both hold.
    expect(await closeoutDue(env.db, 7, new Date('2099-04-07T12:00:00Z'))).not.toContain(bookingId);
    expect(await closeoutDue(env.db, 7, new Date('2099-04-08T12:00:00Z'))).not.toContain(bookingId);
    await settleFinality(env.db, 'live-ctv', 72, { real: new Date('2099-04-08T12:00:00Z') });
    expect(await closeoutDue(env.db, 7, new Date('2099-04-08T12:00:00Z'))).toContain(bookingId);
    const before = await findBookingById(env.db, bookingId);
    expect(before!.closeoutPending).toBe(false); // the flight has not ended in real time (2099)

    const closed = await closeOutBooking(env.db, bookingId, { tolerancePercent: 1 });
    expect(closed).toEqual({ closed: true, releasedMinor: 33_000 });
    expect(await closeOutBooking(env.db, bookingId, { tolerancePercent: 1 })).toEqual({ closed: false, releasedMinor: 0 });
    const { wallet, consistent } = await walletAndLedger(env, org);
    expect(consistent).toBe(true);
    expect(wallet).toMatchObject({ balanceMinor: 1_000_000 - 17_000, reservedMinor: 0, availableMinor: 983_000 });
    const after = await findBookingById(env.db, bookingId);
    expect(after!.closeoutPending).toBe(false);
    expect(after!.events.map((e) => e.action)).toContain('booking.closed-out');
    // A late restatement after closeout moves no money.
    await report(env, line(0), [day('2099-03-30', 14_000)]);
    expect((await walletAndLedger(env, org)).wallet.balanceMinor).toBe(1_000_000 - 17_000);
  });

  test('a line that delivered, was paused and is rejected on resuming keeps what it spent and gives back exactly the rest', async () => {
    const { org, bookingId, lineIds, line } = await running([30_000]);
    await report(env, line(0), [day('2099-03-01', 5_000)]);
    const lineId = lineIds[0]!;
    await env.db.transaction(async (trx) => {
      for (const to of ['stop-requested', 'stopped', 'queued', 'in-progress', 'rejected'] as const) {
        await changeLine(trx, { bookingId, lineId, to, actor: SYSTEM, action: `test.${to}` });
      }
    });
    const { wallet, consistent } = await walletAndLedger(env, org);
    expect(consistent).toBe(true);
    expect(wallet).toMatchObject({ balanceMinor: 1_000_000 - 5_000, reservedMinor: 0 });
    const released = await env
      .db('wallet_entries')
      .where({ booking_id: bookingId, kind: 'release' })
      .select('subject_type', 'amount_minor');
    expect(released.map((r) => [r.subject_type, Number(r.amount_minor)])).toEqual([['line', 25_000]]);
  });

  test('a rejected line gives back its budget at once', async () => {
    const org = `org-money-${++n}`;
    await fundWallet(env, org, 100_000);
    const { bookingId, lineIds } = await liveBooking(env, org, [40_000], 40_000);
    await env.db.transaction(async (trx) => {
      await changeLine(trx, { bookingId, lineId: lineIds[0]!, to: 'in-progress', actor: SYSTEM, action: 'test.start' });
      await changeLine(trx, { bookingId, lineId: lineIds[0]!, to: 'rejected', actor: SYSTEM, action: 'test.reject' });
    });
    expect((await walletAndLedger(env, org)).wallet).toMatchObject({ reservedMinor: 0, balanceMinor: 100_000 });
  });
});
