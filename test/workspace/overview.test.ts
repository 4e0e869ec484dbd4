import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { SYSTEM } from '../../shared/auth/actor';
import { changeLine } from '../../shared/bookings/lines/store';
import { ensureWorkspace } from '../../shared/workspaces/workspace-store';
import { fundWallet } from '../support/wallet';
import { liveBooking } from '../billing/support';
import { rollUpPageviews } from '../../shared/pixel/pageview-rollup';
import { day, report } from '../delivery/support';

let env: TestEnv;
let api: TestApi;
let token: string;
let booked: Awaited<ReturnType<typeof liveBooking>>;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  token = await env.issuer.token({ org: 'org-o', user: 'viewer' });
  const ws = await ensureWorkspace(env.db, 'org-o');
  await fundWallet(env, 'org-o', 100_000);
  booked = await liveBooking(env, 'org-o', [10_000, 20_000, 30_000], 60_000);
  const [confirmed, rejected, uncertain] = booked.lineIds as [string, string, string];
  const move = (lineId: string, ...to: Array<'in-progress' | 'confirmed' | 'rejected' | 'reconciliation-required'>) =>
    env.db.transaction(async (trx) => {
      for (const s of to) await changeLine(trx, { bookingId: booked.bookingId, lineId, to: s, actor: SYSTEM, action: 'test' });
    });
  await move(confirmed, 'in-progress', 'confirmed');
  // Spend is captured from delivery: the confirmed line reports its whole budget delivered today.
  await report(env, { lineId: confirmed, bookingId: booked.bookingId, advertiserId: 'org-o' }, [day(today, 10_000)]);
  await move(rejected, 'in-progress', 'rejected');
  await move(uncertain, 'in-progress', 'reconciliation-required');
  // Pageviews today and three days ago, and one long before the range.
  const view = (at: string) => ({ advertiser_id: 'org-o', pixel_key: ws.pixelKey, received_at: new Date(`${at}T12:00:00Z`) });
  await env.db('pixel_events').insert([view(today), view(today), view(daysAgo(3)), view(daysAgo(400))]);
});
afterAll(() => env.close());

interface Overview {
  range: { from: string; to: string };
  campaigns: { byStatus: Record<string, number> };
  bookings: { byStatus: Record<string, number> };
  linesNeedingAttention: { total: number; lines: Array<{ lineId: string; reason: string; href: string }> };
  spend: { mediaSpendMinor: number; deliveredSpendMinor: number; sandbox: { deliveredSpendMinor: number } };
  linesOffPace: { total: number };
  pageviews: { total: number; byDay: Array<{ date: string; pageviews: number }> };
  wallet: { balanceMinor: number; reservedMinor: number; availableMinor: number };
  openFundingRequests: unknown[];
  pendingApprovals: unknown[];
}

const overview = (query = '', headers: Record<string, string> = {}, as = token) =>
  api.fetch(`/api/v1/workspace/overview${query}`, { token: as, headers });

describe('workspace overview (spec 24)', () => {
  test('by default the last 30 days: statuses, the lines that need someone, spend, pageviews per day and the wallet', async () => {
    const { overview: o } = await json<{ overview: Overview }>(await overview());
    expect(o.range).toEqual({ from: daysAgo(29), to: today });
    expect(o.campaigns.byStatus).toEqual({ booked: 1 });
    expect(o.bookings.byStatus).toEqual({ 'in-progress': 1 });
    expect(o.linesNeedingAttention.total).toBe(2);
    expect(o.linesNeedingAttention.lines.map((l) => l.reason).sort()).toEqual(['reconciliation-required', 'rejected']);
    expect(o.linesNeedingAttention.lines[0]!.href).toBe(`/api/v1/bookings/${booked.bookingId}`);
    expect(o.spend).toMatchObject({ mediaSpendMinor: 10_000, deliveredSpendMinor: 10_000, sandbox: { deliveredSpendMinor: 0 } });
    expect(o.linesOffPace.total).toBe(0);
    expect(o.pageviews.byDay).toHaveLength(30);
    expect(o.pageviews.total).toBe(3);
    expect(o.pageviews.byDay.find((d) => d.date === today)!.pageviews).toBe(2);
    // 100000 in, 10000 spent; 60000 reserved less 10000 captured and 20000 released.
    expect(o.wallet).toMatchObject({ balanceMinor: 90_000, reservedMinor: 30_000, availableMinor: 60_000 });
  });

  test('a range narrows pageviews and spend; one campaign narrows the campaign figures', async () => {
    const { overview: o } = await json<{ overview: Overview }>(await overview(`?from=${daysAgo(3)}&to=${daysAgo(1)}`));
    expect(o.pageviews).toMatchObject({ total: 1 });
    expect(o.pageviews.byDay).toHaveLength(3);
    expect(o.spend).toMatchObject({ mediaSpendMinor: 0, deliveredSpendMinor: 0 });
    const campaignId = (await env.db('bookings').where({ id: booked.bookingId }).first()).campaign_id;
    const one = await json<{ overview: Overview }>(await overview(`?campaignId=${campaignId}`));
    expect(one.overview.linesNeedingAttention.total).toBe(2);
  });

  test('rolling finished days up changes no figure, runs once, and leaves today to the raw events', async () => {
    const before = await json<{ overview: Overview }>(await overview(`?from=${daysAgo(30)}&to=${today}`));
    expect(await rollUpPageviews(env.db)).toBeGreaterThan(0);
    expect(await rollUpPageviews(env.db)).toBe(0);
    const rolled = await env
      .db('pixel_daily_counts')
      .where({ advertiser_id: 'org-o' })
      .select(env.db.raw("to_char(day, 'YYYY-MM-DD') as day"), 'pageviews');
    expect(rolled.map((r) => [r.day, Number(r.pageviews)]).sort()).toEqual(
      [
        [daysAgo(3), 1],
        [daysAgo(400), 1],
      ].sort(),
    );
    const after = await json<{ overview: Overview }>(await overview(`?from=${daysAgo(30)}&to=${today}`));
    expect(after.overview.pageviews).toEqual(before.overview.pageviews);
    // A pageview arriving now still counts at once.
    const ws = await ensureWorkspace(env.db, 'org-o');
    await env.db('pixel_events').insert({ advertiser_id: 'org-o', pixel_key: ws.pixelKey });
    const now = await json<{ overview: Overview }>(await overview());
    expect(now.overview.pageviews.byDay.find((d) => d.date === today)!.pageviews).toBe(3);
  });

  test('another workspace’s campaign is a 404 byte-identical to one that never existed', async () => {
    const campaignId = (await env.db('bookings').where({ id: booked.bookingId }).first()).campaign_id;
    const other = await env.issuer.token({ org: 'org-other', user: 'x' });
    const h = { 'x-request-id': 'overview-404' };
    const foreign = await overview(`?campaignId=${campaignId}`, h, other);
    const never = await overview(`?campaignId=${crypto.randomUUID()}`, h, other);
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toBe(await never.text());
  });

  test.each([
    ['from after to', `?from=${today}&to=${daysAgo(1)}`],
    ['a range over 366 days', `?from=${daysAgo(400)}&to=${today}`],
    ['a date that does not exist', '?from=2026-02-30&to=2026-03-01'],
    ['a malformed date', '?from=2026-2-1'],
    ['an unknown parameter', '?since=2026-01-01'],
    ['a campaign id over 100 characters', `?campaignId=${'c'.repeat(101)}`],
  ])('%s is a 400 problem', async (_what, query) => {
    const res = await overview(query);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  });
});
