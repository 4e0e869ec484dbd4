import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, waitForBooking } from '../support/bookings';
import { subscribe } from '../support/webhooks';
import { pollSupplier } from '../support/delivery-poll';
import { addDays, daysFrom } from '../../shared/dates';
import { postInvoice } from './support';
import type { Discrepancy } from '../../shared/delivery/discrepancies';
import type { InvoiceLineView, InvoiceView } from '../../shared/reconciliation/reconciliation-views';
import type { MakegoodView } from '../../shared/delivery/makegoods';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ DELIVERY_POLL_EVERY_MS: '3600000' });
});
afterAll(() => env.close());

const poll = (org: string) => pollSupplier(env.db, 'sandbox-ctv', { batchSize: 10, advertiserId: org });

// A flight of the first ten days of next month, so the sandbox clock can walk through it.
const today = new Date().toISOString().slice(0, 10);
const start = (() => {
  const [y, m] = today.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
})();
const period = start.slice(0, 7);

/** Moves the workspace's sandbox clock to `day` (on its clock), then polls its seller as the worker does. */
async function walkTo(org: string, token: string, day: string) {
  const clock = await json<{ clock: { today: string } }>(await api.fetch('/api/v1/sandbox/clock', { token }));
  const days = daysFrom(clock.clock.today, day);
  if (days > 0) expect((await post(api, token, '/api/v1/sandbox/clock/advance', { days })).status).toBe(200);
  return poll(org);
}

async function launch(org: string, budgets: number[]) {
  await subscribe(env, api, org, ['delivery.discrepancy', 'invoice.disputed', 'makegood.owed', 'makegood.fulfilled', 'makegood.expired']);
  const lines = budgets.map((budgetMinor) => ({ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor }));
  const launched = await launchPlan(env, api, lines, org, { startDate: start, endDate: addDays(start, 9) });
  const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
  return { token: launched.token, lines: booking.lines.map((l) => l.id) };
}
const events = (org: string, type: string) => env.db('webhook_events').where({ workspace_id: org, type }).orderBy('seq');

describe('a sandbox month on the workspace test clock', () => {
  test('a final day restated by the seller is kept as a discrepancy with both figures, told once, and the final figure stands', async () => {
    const org = 'org-recon-restate';
    const { token, lines } = await launch(org, [100_076]);
    await walkTo(org, token, addDays(start, 4));
    const final = await env.db('delivery_days').where({ line_id: lines[0] }).orderBy('day').select('day', 'spend_minor', 'final_source');
    expect(final.slice(0, 2).map((d) => d.final_source)).toEqual(['seller', 'seller']);
    expect(final.slice(2).every((d) => d.final_source === null)).toBe(true);

    // (Moving the clock queues the worker's poll too: whichever runs first records it, once.)
    await walkTo(org, token, addDays(start, 6));
    const after = await env
      .db('delivery_days')
      .where({ line_id: lines[0] })
      .whereIn('day', [start, addDays(start, 1)])
      .orderBy('day');
    expect(after.map((d) => d.spend_minor)).toEqual(final.slice(0, 2).map((d) => d.spend_minor));

    const listed = await json<{ discrepancies: Discrepancy[] }>(await api.fetch('/api/v1/delivery/discrepancies?status=open', { token }));
    expect(listed.discrepancies.map((d) => d.day).sort()).toEqual([start, addDays(start, 1)]);
    for (const d of listed.discrepancies) {
      expect(d).toMatchObject({ seller: 'sandbox-ctv', lineId: lines[0], reportedBy: 'supplier', status: 'open' });
      expect(d.reported.spendMinor).toBe(Math.round(d.final.spendMinor * 0.9));
    }
    // Asked again, the same restated figures are the same discrepancies: nothing new is told.
    await poll(org);
    expect(await events(org, 'delivery.discrepancy')).toHaveLength(2);

    // A person takes one up; it leaves the open list, once.
    const id = listed.discrepancies[0]!.id;
    const ack = await post(api, token, `/api/v1/delivery/discrepancies/${id}/acknowledge`, { note: 'Raised with the seller' });
    expect(ack.status).toBe(200);
    expect((await post(api, token, `/api/v1/delivery/discrepancies/${id}/acknowledge`, { note: 'Again' })).status).toBe(409);
    const agent = await env.issuer.token({ org, agent: 'assistant' });
    expect(
      (await post(api, agent, `/api/v1/delivery/discrepancies/${listed.discrepancies[1]!.id}/acknowledge`, { note: 'By an agent' })).status,
    ).toBe(403);
    const open = await json<{ discrepancies: Discrepancy[] }>(await api.fetch('/api/v1/delivery/discrepancies?status=open', { token }));
    expect(open.discrepancies.map((d) => d.id)).toEqual([listed.discrepancies[1]!.id]);
  });

  test('the month closes once final; an over-billed invoice is disputed; a make-good is burned down by zero-cost delivery, or expires unmet', async () => {
    const org = 'org-recon-month';
    const { token, lines } = await launch(org, [100_000, 100_077]);
    // Before the month is final, the invoice cannot be matched.
    await walkTo(org, token, addDays(start, 8));
    expect(await env.db('delivery_month_closes').where({ advertiser_id: org })).toEqual([]);
    const invoice = (n: string) => ({
      invoiceNumber: n,
      seller: 'sandbox-ctv',
      period,
      currency: 'GBP',
      lines: lines.map((lineId) => ({ lineId, impressions: 1, amountMinor: 130_000 })),
    });
    expect((await postInvoice(api, token, invoice('SBX-0'))).status).toBe(409);
    // The statement shows the month still open: final and provisional apart.
    const open = await json<{
      statement: { totals: { finalSpendMinor: number; provisionalSpendMinor: number; closedLines: number }; nextOffset: number | null };
    }>(await api.fetch(`/api/v1/billing/statements/sandbox-ctv/${period}?limit=1`, { token }));
    expect(open.statement.totals.closedLines).toBe(0);
    expect(open.statement.totals.finalSpendMinor).toBeGreaterThan(0);
    expect(open.statement.totals.provisionalSpendMinor).toBeGreaterThan(0);
    expect(open.statement.nextOffset).toBe(1);

    // Three days after the flight's last day its figures are final (the seller says so; its window has passed): the month closes.
    await walkTo(org, token, addDays(start, 13));
    expect(await env.db('delivery_month_closes').where({ advertiser_id: org, period })).toHaveLength(2);
    const statement = await json<{ statement: { totals: { billableMinor: number; provisionalSpendMinor: number; closedLines: number } } }>(
      await api.fetch(`/api/v1/billing/statements/sandbox-ctv/${period}`, { token }),
    );
    expect(statement.statement.totals).toMatchObject({ billableMinor: 200_077, provisionalSpendMinor: 0, closedLines: 2 });

    const res = await postInvoice(api, token, invoice('SBX-1'));
    expect(res.status).toBe(201);
    const imported = await json<{ invoice: InvoiceView; lines: InvoiceLineView[] }>(res);
    expect(imported.lines.map((l) => l.status)).toEqual(['disputed', 'disputed']);
    const dueBy = addDays(start, 20);
    for (const l of imported.lines) {
      const resolved = await post(api, token, `/api/v1/billing/invoices/${imported.invoice.id}/lines/${l.id}/resolve`, {
        expectedVersion: 1,
        remedy: 'additional_delivery',
        owedImpressions: 5_000,
        dueBy,
        reason: 'Billed 30% over: run the difference',
      });
      expect(resolved.status).toBe(200);
    }
    expect(await events(org, 'makegood.owed')).toHaveLength(2);

    // The seller runs the make-good after the flight at no cost; the …77 line never does.
    await walkTo(org, token, addDays(start, 17));
    const goods = async () =>
      (await json<{ makegoods: MakegoodView[] }>(await api.fetch('/api/v1/billing/makegoods', { token }))).makegoods;
    const byLine = (list: MakegoodView[], i: number) => list.find((m) => m.lineId === lines[i])!;
    expect(byLine(await goods(), 0)).toMatchObject({ status: 'fulfilled' });
    expect(byLine(await goods(), 0).deliveredImpressions).toBeGreaterThanOrEqual(5_000);
    expect(byLine(await goods(), 1)).toMatchObject({ status: 'owed', deliveredImpressions: 0 });
    // The zero-cost days were stored and cost nothing.
    const extra = await env
      .db('delivery_days')
      .where({ line_id: lines[0] })
      .where('day', '>', addDays(start, 9))
      .sum('spend_minor as s')
      .first();
    expect(Number(extra!.s)).toBe(0);

    // Past its date, unmet: flagged once.
    await walkTo(org, token, addDays(dueBy, 2));
    expect(byLine(await goods(), 1)).toMatchObject({ status: 'expired' });
    await poll(org);
    expect((await events(org, 'makegood.expired')).map((e) => e.subject_id)).toEqual([byLine(await goods(), 1).id]);
    expect((await events(org, 'makegood.fulfilled')).map((e) => e.subject_id)).toEqual([byLine(await goods(), 0).id]);
  });
});
