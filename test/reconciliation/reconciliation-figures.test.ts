import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { day } from '../delivery/support';
import { deliver, finalMonth, invoiceBody, postInvoice } from './support';
import { addDays } from '../../shared/dates';
import type { ReconciliationFigures } from '../../shared/reporting/reconciliation-figures';
import type { InvoiceLineView, InvoiceView } from '../../shared/reconciliation/reconciliation-views';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

/** A month two months back (closed by its window long ago), and the month before it. */
const monthsBack = (n: number) => {
  const d = new Date();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - n);
  return d.toISOString().slice(0, 7);
};
const PERIOD = monthsBack(2);
const EARLIER = monthsBack(3);

type Imported = { invoice: InvoiceView; lines: InvoiceLineView[] };

test('the billing summary and the workspace overview count invoices by state, the amount at stake, make-goods owed and open discrepancies', async () => {
  const org = 'org-recon-figures';
  // Final figures: A 20,000 (two days), B 12,000, C 8,000, D 6,000, on live-ctv (tolerance 10%).
  const { bookingId, lineIds } = await finalMonth(
    env,
    org,
    [50_000, 30_000, 20_000, 20_000],
    [[10_000, 10_000], [12_000], [8_000], [6_000]],
    { period: PERIOD, seller: 'live-ctv' },
  );
  const [a, b, c, d] = lineIds as [string, string, string, string];
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const imported = async (lines: Array<Record<string, unknown>>) => {
    const res = await postInvoice(api, token, invoiceBody(lines, { period: PERIOD }));
    expect(res.status).toBe(201);
    return json<Imported>(res);
  };
  // The first invoice: A 2.5% over (approved), B 3,000 over (disputed), D 3,000 over (disputed).
  const first = await imported([
    { lineId: a, impressions: 200_000, amountMinor: 20_500 },
    { lineId: b, impressions: 150_000, amountMinor: 15_000 },
    { lineId: d, impressions: 90_000, amountMinor: 9_000 },
  ]);
  expect(first.lines.map((l) => l.status)).toEqual(['approved', 'disputed', 'disputed']);
  // The second: C at our figure (approved).
  const second = await imported([{ lineId: c, impressions: 80_000, amountMinor: 8_000 }]);
  expect(second.invoice.status).toBe('approved');
  // D's dispute ends in a make-good of 30,000 impressions; B's stays open.
  const resolved = await post(api, token, `/api/v1/billing/invoices/${first.invoice.id}/lines/${first.lines[2]!.id}/resolve`, {
    expectedVersion: 1,
    remedy: 'additional_delivery',
    owedImpressions: 30_000,
    dueBy: addDays(new Date().toISOString().slice(0, 10), 60),
    reason: 'Short on our count; the seller runs it again',
  });
  expect(resolved.status).toBe(200);
  // The seller restates one of A's final days: a discrepancy for a person.
  const restated = await deliver(env, { lineId: a, bookingId, advertiserId: org }, [day(`${PERIOD}-01`, 11_000, 110_000)]);
  expect(restated.restated).toHaveLength(1);

  const expected: ReconciliationFigures = {
    invoices: { received: 2, approved: 1, disputed: 1, resolved: 0, invoicedMinor: 20_500 + 15_000 + 9_000 + 8_000 },
    disputedLines: 1,
    atStakeMinor: 3_000,
    makegoodsOwed: { count: 1, impressions: 30_000 },
    makegoodsExpired: 0,
    openDiscrepancies: 1,
  };
  const summary = async (period: string) =>
    (
      await json<{ summary: { reconciliation: ReconciliationFigures } }>(
        await api.fetch(`/api/v1/billing/summary?period=${period}`, { token }),
      )
    ).summary.reconciliation;
  expect(await summary(PERIOD)).toEqual(expected);
  const overview = await api.fetch('/api/v1/workspace/overview', { token });
  expect(overview.status).toBe(200);
  expect((await json<{ overview: { reconciliation: ReconciliationFigures } }>(overview)).overview.reconciliation).toEqual(expected);

  // Another month's summary counts none of this month's invoices or disputes.
  expect(await summary(EARLIER)).toMatchObject({
    invoices: { received: 0, approved: 0, disputed: 0, resolved: 0, invoicedMinor: 0 },
    disputedLines: 0,
    atStakeMinor: 0,
  });

  // Settling B's dispute leaves nothing at stake, and the invoice resolved.
  const settled = await post(api, token, `/api/v1/billing/invoices/${first.invoice.id}/lines/${first.lines[1]!.id}/resolve`, {
    expectedVersion: 1,
    remedy: 'credit',
    amountMinor: 3_000,
    reason: 'Billed above our count',
  });
  expect(settled.status).toBe(200);
  expect(await summary(PERIOD)).toEqual({
    ...expected,
    invoices: { ...expected.invoices, disputed: 0, resolved: 1 },
    disputedLines: 0,
    atStakeMinor: 0,
  });
});
