import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { runMaintenanceJob } from '../support/maintenance';
import { fundWallet } from '../support/wallet';
import { liveBooking } from '../billing/support';
import { confirmLines, day } from '../delivery/support';
import { deliver, finalMonth, invoiceBody, postInvoice } from './support';
import { addDays } from '../../shared/dates';
import type { InvoiceLineView, InvoiceView } from '../../shared/reconciliation/reconciliation-views';

/**
 * Each seller bills on its own terms (docs/billing.md, Reconciliation): `live-ctv` has a 24-hour
 * window and a 2% tolerance from SELLER_BILLING_TERMS; the AdCP seller `spot` carries 120 hours
 * and 30% in its own `billing` terms, which win over what SELLER_BILLING_TERMS says of it;
 * `adcp-ctl` says nothing, so the deployment's defaults (72 hours, 10%) are its terms.
 */
const TERMS = {
  SELLER_FINALIZATION_HOURS: '72',
  SELLER_MAX_VARIANCE_PERCENT: '10',
  SELLER_BILLING_TERMS: JSON.stringify({
    'live-ctv': { finalizationHours: 24, maxVariancePercent: 2 },
    'adcp-spot': { finalizationHours: 24, maxVariancePercent: 2 },
  }),
  ADCP_SELLERS: sellersAt({}, {}, { spot: { billing: { finalizationHours: 120, maxVariancePercent: 30 } } }),
};

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api(TERMS);
  await env.workers({ ...TERMS, DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

let n = 0;

test('the housekeeping pass makes a day final once its own seller’s window has passed, and not before', async () => {
  const org = `org-terms-${++n}`;
  await fundWallet(env, org, 1_000_000);
  const { bookingId, lineIds } = await liveBooking(env, org, [50_000, 50_000, 50_000], 150_000);
  const sellers = ['live-ctv', 'adcp-ctl', 'adcp-spot'];
  for (const [i, lineId] of lineIds.entries()) await env.db('booking_lines').where({ id: lineId }).update({ adapter_key: sellers[i] });
  await confirmLines(env, bookingId, lineIds);
  // Whatever the time of day: the day before yesterday ended 24 to 48 hours ago; four days ago ended 72 to 96 hours ago.
  const today = new Date().toISOString().slice(0, 10);
  const twoDaysAgo = addDays(today, -2);
  const fourDaysAgo = addDays(today, -4);
  for (const lineId of lineIds) {
    await deliver(env, { lineId, bookingId, advertiserId: org }, [day(fourDaysAgo, 1_000, 10_000), day(twoDaysAgo, 1_000, 10_000)]);
  }

  await runMaintenanceJob(env, 'settle-finality');

  const finalDays = async (lineId: string) =>
    (await env
      .db('delivery_days')
      .where({ line_id: lineId })
      .whereNotNull('final_at')
      .orderBy('day')
      .select(env.db.raw("to_char(day, 'YYYY-MM-DD') as day"), 'final_source')) as Array<{ day: string; final_source: string }>;
  // 24 hours: both days are final, by the window.
  expect(await finalDays(lineIds[0]!)).toEqual([
    { day: fourDaysAgo, final_source: 'window' },
    { day: twoDaysAgo, final_source: 'window' },
  ]);
  // The default 72 hours: only the older day.
  expect(await finalDays(lineIds[1]!)).toEqual([{ day: fourDaysAgo, final_source: 'window' }]);
  // The AdCP seller's own 120 hours, not the 24 SELLER_BILLING_TERMS names for it: neither.
  expect(await finalDays(lineIds[2]!)).toEqual([]);
});

type Imported = { invoice: InvoiceView; lines: InvoiceLineView[] };

test.each([
  // seller, tolerance, an amount exactly at it (approved), one just beyond it (disputed); both lines' final figure is 10,000.
  ['live-ctv', 2, 10_200, 10_300],
  ['adcp-ctl', 10, 11_000, 11_001],
  ['adcp-spot', 30, 13_000, 13_001],
] as const)('an invoice from %s is matched against its own tolerance of %d%%', async (seller, tolerance, within, beyond) => {
  const org = `org-terms-${++n}`;
  const { lineIds } = await finalMonth(env, org, [50_000, 50_000], [[10_000], [10_000]], { period: '2099-03', seller });
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const res = await postInvoice(
    api,
    token,
    invoiceBody(
      [
        { lineId: lineIds[0], impressions: 100_000, amountMinor: within },
        { lineId: lineIds[1], impressions: 100_000, amountMinor: beyond },
      ],
      { seller },
    ),
  );
  expect(res.status).toBe(201);
  const { invoice, lines } = await json<Imported>(res);
  expect(invoice.maxVariancePercent).toBe(tolerance);
  expect(lines.map((l) => [l.status, l.finalMinor, l.varianceMinor])).toEqual([
    ['approved', 10_000, within - 10_000],
    ['disputed', 10_000, beyond - 10_000],
  ]);
  expect(invoice.status).toBe('disputed');
});
