import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { SYSTEM } from '../../shared/auth/actor';
import { changeLine } from '../../shared/bookings/lines/store';
import { monthsBefore } from '../../shared/wallet/fees';
import { periodOf, post } from '../../shared/wallet/ledger';
import { ensureWorkspace } from '../../shared/workspaces/workspace-store';
import { fundWallet } from '../support/wallet';
import { liveBooking } from './support';
import { day, report } from '../delivery/support';

const THRESHOLD = 300_000;
let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ BILLING_SCALE_TRAILING_MONTHS: '3', BILLING_SCALE_THRESHOLD_MINOR: String(THRESHOLD) });
});
afterAll(() => env.close());

const current = periodOf(new Date());

interface Summary {
  period: string;
  mediaSpendMinor: number;
  managementFeesMinor: number;
  platformFeesMinor: number;
  feesMinor: number;
  assetChargesMinor: number;
  tier: { name: string; rule: { trailingMonths: number; thresholdMinor: number }; trailingSpendMinor: number; trailing: unknown[] };
  wallet: { balanceMinor: number; reservedMinor: number; availableMinor: number };
}

async function summary(org: string, query = '', token?: string) {
  const res = await api.fetch(`/api/v1/billing/summary${query}`, { token: token ?? (await env.issuer.token({ org, user: `${org}-u` })) });
  return res;
}
const read = async (org: string, query = '') => (await json<{ summary: Summary }>(await summary(org, query))).summary;

/** Media spend captured in an earlier month, as that month's confirmed lines left it. */
async function pastSpend(org: string, period: string, amount: number) {
  await fundWallet(env, org, amount);
  await env.db.transaction(async (trx) => {
    const base = {
      advertiserId: org,
      amountMinor: amount,
      subjectType: 'line' as const,
      subjectId: crypto.randomUUID(),
      actorId: 'test',
      period,
    };
    await post(trx, { ...base, kind: 'reservation' });
    await post(trx, { ...base, kind: 'capture' });
  });
}

/** A live line confirmed now that delivers its whole budget: its spend is captured and its fee accrues, as in production. */
async function confirmNow(org: string, budgets: number[]) {
  await fundWallet(
    env,
    org,
    budgets.reduce((s, b) => s + b, 0),
  );
  const { bookingId, lineIds } = await liveBooking(
    env,
    org,
    budgets,
    budgets.reduce((s, b) => s + b, 0),
  );
  for (const [i, lineId] of lineIds.entries()) {
    await env.db.transaction(async (trx) => {
      await changeLine(trx, { bookingId, lineId, to: 'in-progress', actor: SYSTEM, action: 'test.start' });
      await changeLine(trx, { bookingId, lineId, to: 'confirmed', actor: SYSTEM, action: 'test.confirm' });
    });
    await report(env, { lineId, bookingId, advertiserId: org }, [day('2099-03-01', budgets[i]!)]);
  }
}

describe('billing summary (spec 25)', () => {
  test('a first month with no spend: nothing owed, the standard tier, and the wallet', async () => {
    await ensureWorkspace(env.db, 'org-new');
    await fundWallet(env, 'org-new', 50_000);
    const s = await read('org-new');
    expect(s).toMatchObject({ period: current, mediaSpendMinor: 0, feesMinor: 0, assetChargesMinor: 0 });
    expect(s.tier).toMatchObject({ name: 'standard', rule: { trailingMonths: 3, thresholdMinor: THRESHOLD }, trailingSpendMinor: 0 });
    expect(s.tier.trailing).toHaveLength(3);
    expect(s.wallet).toEqual({ balanceMinor: 50_000, reservedMinor: 0, availableMinor: 50_000, currency: 'GBP' });
  });

  test('fees are 10% of the month’s spend rounded half up, accrued so that the month always owes fee(total)', async () => {
    // 5 → 0.5 → 1; 5 + 4 = 9 → 0.9 → 1 (nothing more); 9 + 6 = 15 → 1.5 → 2.
    await confirmNow('org-round', [5, 4, 6]);
    const s = await read('org-round');
    expect(s).toMatchObject({ mediaSpendMinor: 15, managementFeesMinor: 2, platformFeesMinor: 0 });
    const fees = await env
      .db('wallet_entries')
      .where({ advertiser_id: 'org-round', kind: 'management_fee' })
      .orderBy('id')
      .pluck('amount_minor');
    expect(fees).toEqual(['1', '1']);
  });

  test('exactly at the trailing-spend threshold the scale tier applies: 5% plus 749 GBP for the month, once', async () => {
    for (const [i, amount] of [100_000, 100_000, 100_000].entries()) await pastSpend('org-scale', monthsBefore(current, i + 1), amount);
    await confirmNow('org-scale', [10_000, 10_000]);
    const s = await read('org-scale');
    expect(s.tier).toMatchObject({ name: 'scale', trailingSpendMinor: THRESHOLD });
    expect(s).toMatchObject({ mediaSpendMinor: 20_000, managementFeesMinor: 1_000, platformFeesMinor: 74_900, feesMinor: 75_900 });
  });

  test('one minor unit below the threshold stays on the standard tier', async () => {
    for (const [i, amount] of [100_000, 100_000, 99_999].entries()) await pastSpend('org-below', monthsBefore(current, i + 1), amount);
    await confirmNow('org-below', [10_000]);
    const s = await read('org-below');
    expect(s.tier).toMatchObject({ name: 'standard', trailingSpendMinor: THRESHOLD - 1 });
    expect(s).toMatchObject({ managementFeesMinor: 1_000, platformFeesMinor: 0 });
  });

  test('spend older than the trailing window does not count, and an earlier month can be read', async () => {
    await pastSpend('org-old', monthsBefore(current, 4), 1_000_000);
    await pastSpend('org-old', monthsBefore(current, 1), 7_000);
    expect((await read('org-old')).tier).toMatchObject({ name: 'standard', trailingSpendMinor: 7_000 });
    expect(await read('org-old', `?period=${monthsBefore(current, 1)}`)).toMatchObject({ mediaSpendMinor: 7_000 });
  });

  test('the trailing months of any month are the ones just before it, in any year', async () => {
    expect(monthsBefore('2000-02', 3)).toBe('1999-11');
    expect(monthsBefore('0099-02', 3)).toBe('0098-11');
    expect(monthsBefore('2026-12', -1)).toBe('2027-01');
    const s = await read('org-new', '?period=2000-02');
    expect(s.tier.trailing).toEqual([
      { period: '1999-11', mediaSpendMinor: 0 },
      { period: '1999-12', mediaSpendMinor: 0 },
      { period: '2000-01', mediaSpendMinor: 0 },
    ]);
  });

  test('a delegated agent may read it', async () => {
    const token = await env.issuer.token({ org: 'org-new', user: 'u', agent: 'bot' });
    expect((await summary('org-new', '', token)).status).toBe(200);
  });

  test.each([
    ['a future month', `?period=${monthsBefore(current, -1)}`],
    ['month 13', '?period=2026-13'],
    ['a one-digit month', '?period=2026-1'],
    ['not a month', '?period=last'],
    ['year zero', '?period=0000-01'],
    ['a month before any ledger could hold an entry', '?period=1999-12'],
    ['an unknown parameter', '?month=2026-01'],
  ])('%s is a 400 problem', async (_what, query) => {
    const res = await summary('org-new', query);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  });
});
