import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { subscribe } from '../support/webhooks';
import { walletAndLedger } from '../support/wallet';
import { finalMarch, invoiceBody, postInvoice, snapshot } from './support';
import type { InvoiceLineView, InvoiceView } from '../../shared/reconciliation/reconciliation-views';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

type Imported = { invoice: InvoiceView; lines: InvoiceLineView[] };
let n = 0;
/** A workspace whose March 2099 on live-ctv is final: line A delivered 20,000 (2 days), line B 12,000. */
async function world() {
  const org = `org-inv-${++n}`;
  await subscribe(env, api, org, ['invoice.imported', 'invoice.disputed', 'invoice.resolved', 'makegood.owed']);
  const { lineIds } = await finalMarch(env, org, [50_000, 30_000], [[10_000, 10_000], [12_000]]);
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  return { org, token, a: lineIds[0]!, b: lineIds[1]! };
}
const events = (org: string, type: string) => env.db('webhook_events').where({ workspace_id: org, type }).orderBy('seq');

describe('importing an invoice matches each line to the final delivery', () => {
  test('a line within the seller’s variance is approved and one beyond it disputed, with the evidence; totals and events follow', async () => {
    const { org, token, a, b } = await world();
    const res = await postInvoice(
      api,
      token,
      invoiceBody([
        { lineId: a, impressions: 205_000, amountMinor: 20_500 },
        { buyId: 'buy-2', packageId: 'pkg-2', impressions: 150_000, amountMinor: 15_000 },
      ]),
    );
    expect(res.status).toBe(201);
    const { invoice, lines } = await json<Imported>(res);
    expect(invoice).toMatchObject({
      status: 'disputed',
      invoicedMinor: 35_500,
      finalMinor: 32_000,
      varianceMinor: 3_500,
      maxVariancePercent: 10,
    });
    expect(invoice.variancePercent).toBe(10.94);
    expect(invoice.counts).toEqual({ approved: 1, disputed: 1, resolved: 0 });
    expect(lines[0]).toMatchObject({
      lineId: a,
      status: 'approved',
      finalMinor: 20_000,
      varianceMinor: 500,
      variancePercent: 2.5,
      evidence: null,
    });
    expect(lines[1]).toMatchObject({ lineId: b, status: 'disputed', finalMinor: 12_000, varianceMinor: 3_000, variancePercent: 25 });
    const evidence = lines[1]!.evidence as { ours: { days: Array<{ date: string; spendMinor: number }> }; seller: { amountMinor: number } };
    expect(evidence.ours.days).toEqual([{ date: '2099-03-01', impressions: 120_000, spendMinor: 12_000, final: 'window' }]);
    expect(evidence.seller.amountMinor).toBe(15_000);
    expect((await events(org, 'invoice.imported')).map((e) => e.subject_id)).toEqual([invoice.id]);
    expect((await events(org, 'invoice.disputed'))[0]!.body).toMatchObject({ disputedLines: 1, invoicedMinor: 35_500 });
    // The statement shows the line's invoice beside our figures.
    const statement = await json<{ statement: { lines: Array<{ lineId: string; invoice: { status: string } | null }> } }>(
      await api.fetch('/api/v1/billing/statements/live-ctv/2099-03', { token }),
    );
    expect(statement.statement.lines.map((l) => [l.lineId, l.invoice?.status])).toEqual([
      [a, 'approved'],
      [b, 'disputed'],
    ]);
  });

  test('the exact percent at the tolerance is approved; one minor unit beyond is disputed', async () => {
    const { token, a, b } = await world();
    const res = await postInvoice(
      api,
      token,
      invoiceBody([
        { lineId: a, impressions: 1, amountMinor: 22_000 },
        { lineId: b, impressions: 1, amountMinor: 13_201 },
      ]),
    );
    const { lines } = await json<Imported>(res);
    expect(lines.map((l) => l.status)).toEqual(['approved', 'disputed']);
  });

  test('a CSV invoice in the documented layout is imported like JSON', async () => {
    const { token, a } = await world();
    const csv = [
      'invoice_number,seller,period,currency,line_id,buy_id,package_id,impressions,amount_minor',
      `CSV-1,live-ctv,2099-03,GBP,${a},,,200000,20000`,
      'CSV-1,live-ctv,2099-03,GBP,,buy-2,pkg-2,120000,12000',
    ].join('\r\n');
    const res = await postInvoice(api, token, csv, { contentType: 'text/csv' });
    expect(res.status).toBe(201);
    const { invoice } = await json<Imported>(res);
    expect(invoice).toMatchObject({ format: 'csv', status: 'approved', invoiceNumber: 'CSV-1', lineCount: 2, varianceMinor: 0 });
  });

  test('the same Idempotency-Key and body replays the first answer and imports nothing more', async () => {
    const { org, token, a } = await world();
    const body = invoiceBody([{ lineId: a, impressions: 200_000, amountMinor: 20_000 }]);
    const key = randomUUID();
    const first = await postInvoice(api, token, body, { key });
    const again = await postInvoice(api, token, body, { key });
    expect(again.status).toBe(201);
    expect((await json<Imported>(again)).invoice.id).toBe((await json<Imported>(first)).invoice.id);
    expect((await snapshot(env, org)).invoices).toBe(1);
  });
});

describe('an invoice that cannot be matched is refused whole, naming the rows, and nothing changes', () => {
  const refusals: Array<[string, (w: Awaited<ReturnType<typeof world>>) => Promise<Response>, number, string, string[] | null]> = [
    [
      'no Idempotency-Key',
      (w) => postInvoice(api, w.token, invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 1 }]), { key: null }),
      400,
      'idempotency_key_required',
      null,
    ],
    [
      'a line that is not ours',
      (w) =>
        postInvoice(
          api,
          w.token,
          invoiceBody([
            { lineId: w.a, impressions: 1, amountMinor: 1 },
            { lineId: randomUUID(), impressions: 1, amountMinor: 1 },
          ]),
        ),
      400,
      'invalid_rows',
      ['body.lines.1.lineId'],
    ],
    [
      'a buy the seller never gave us',
      (w) => postInvoice(api, w.token, invoiceBody([{ buyId: 'buy-9', impressions: 1, amountMinor: 1 }])),
      400,
      'invalid_rows',
      ['body.lines.0.buyId'],
    ],
    [
      'a currency other than the booking’s',
      (w) =>
        postInvoice(
          api,
          w.token,
          invoiceBody([
            { lineId: w.a, impressions: 1, amountMinor: 1 },
            { lineId: w.b, impressions: 1, amountMinor: 1, currency: 'EUR' },
          ]),
        ),
      400,
      'invalid_rows',
      ['body.lines.1.currency'],
    ],
    [
      'the same line twice',
      (w) =>
        postInvoice(
          api,
          w.token,
          invoiceBody([
            { lineId: w.a, impressions: 1, amountMinor: 1 },
            { buyId: 'buy-1', packageId: 'pkg-1', impressions: 1, amountMinor: 1 },
          ]),
        ),
      400,
      'invalid_rows',
      ['body.lines.1'],
    ],
    [
      'a malformed line',
      (w) => postInvoice(api, w.token, invoiceBody([{ lineId: w.a, impressions: -1, amountMinor: 1.5, extra: 1 }])),
      400,
      'invalid_rows',
      null,
    ],
    [
      'an unknown seller',
      (w) => postInvoice(api, w.token, invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 1 }], { seller: 'nobody' })),
      400,
      'unknown_seller',
      null,
    ],
    [
      'an unknown field',
      (w) => postInvoice(api, w.token, { ...invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 1 }]), total: 1 }),
      400,
      'validation_failed',
      null,
    ],
    [
      'a CSV with the wrong header',
      (w) => postInvoice(api, w.token, `invoice,line\r\nX,${w.a}`, { contentType: 'text/csv' }),
      400,
      'malformed_csv',
      null,
    ],
    [
      'a CSV whose rows disagree on the invoice',
      (w) =>
        postInvoice(
          api,
          w.token,
          `invoice_number,seller,period,currency,line_id,buy_id,package_id,impressions,amount_minor\r\nA,live-ctv,2099-03,GBP,${w.a},,,1,1\r\nB,live-ctv,2099-03,GBP,${w.b},,,1,1`,
          { contentType: 'text/csv' },
        ),
      400,
      'invalid_rows',
      ['body.lines.1.invoice_number'],
    ],
    [
      'a month not final yet',
      (w) => postInvoice(api, w.token, invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 1 }], { period: '2099-04' })),
      409,
      'period_not_final',
      ['body.lines.0'],
    ],
    [
      'a delegated agent',
      async (w) =>
        postInvoice(
          api,
          await env.issuer.token({ org: w.org, agent: 'assistant' }),
          invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 1 }]),
        ),
      403,
      'human_required',
      null,
    ],
    [
      'a product that does not cover every channel',
      async (w) =>
        postInvoice(
          api,
          await env.issuer.token({ org: w.org, product: 'flightdeck-dooh' }),
          invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 1 }]),
        ),
      403,
      'channel_not_entitled',
      null,
    ],
  ];
  test.each(refusals)('%s', async (_what, send, status, code, paths) => {
    const w = await world();
    const before = await snapshot(env, w.org);
    const res = await send(w);
    expect(res.status).toBe(status);
    const problem = await json<{ code: string; errors?: Array<{ path: string; message: string }> }>(res);
    expect(problem.code).toBe(code);
    if (paths) {
      expect(problem.errors!.map((e) => e.path)).toEqual(paths);
      for (const e of problem.errors!) expect(e.message).toMatch(/^row \d+: /);
    }
    expect(await snapshot(env, w.org)).toEqual(before);
  });

  test('a second invoice with the same number, or for a month already invoiced, is a 409 and changes nothing', async () => {
    const w = await world();
    const first = invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 20_000 }]);
    expect((await postInvoice(api, w.token, first)).status).toBe(201);
    const before = await snapshot(env, w.org);
    const same = await postInvoice(api, w.token, { ...first, lines: [{ lineId: w.b, impressions: 1, amountMinor: 12_000 }] });
    expect(same.status).toBe(409);
    expect((await json<{ code: string }>(same)).code).toBe('duplicate_invoice');
    const twice = await postInvoice(
      api,
      w.token,
      invoiceBody([
        { lineId: w.b, impressions: 1, amountMinor: 12_000 },
        { lineId: w.a, impressions: 1, amountMinor: 20_000 },
      ]),
    );
    expect(twice.status).toBe(409);
    const problem = await json<{ code: string; errors: Array<{ path: string }> }>(twice);
    expect(problem).toMatchObject({ code: 'already_invoiced', errors: [{ path: 'body.lines.1' }] });
    expect(await snapshot(env, w.org)).toEqual(before);
  });

  test('another workspace’s invoice is a 404 exactly like an id that never existed', async () => {
    const w = await world();
    const { invoice } = await json<Imported>(
      await postInvoice(api, w.token, invoiceBody([{ lineId: w.a, impressions: 1, amountMinor: 20_000 }])),
    );
    const stranger = await env.issuer.token({ org: 'org-inv-stranger' });
    const theirs = await api.fetch(`/api/v1/billing/invoices/${invoice.id}`, { token: stranger });
    const none = await api.fetch(`/api/v1/billing/invoices/${randomUUID()}`, { token: stranger });
    expect([theirs.status, none.status]).toEqual([404, 404]);
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(await json(theirs))).toEqual(strip(await json(none)));
    // Agents may read.
    const agent = await env.issuer.token({ org: w.org, agent: 'assistant' });
    expect((await api.fetch(`/api/v1/billing/invoices/${invoice.id}`, { token: agent })).status).toBe(200);
  });
});

describe('a person resolves a dispute with one remedy, recorded with who and why', () => {
  async function disputed() {
    const w = await world();
    const res = await postInvoice(api, w.token, invoiceBody([{ lineId: w.b, impressions: 150_000, amountMinor: 15_000 }]));
    const { invoice, lines } = await json<Imported>(res);
    return { ...w, invoice, line: lines[0]! };
  }
  const resolve = (token: string, invoiceId: string, lineId: string, body: unknown) =>
    post(api, token, `/api/v1/billing/invoices/${invoiceId}/lines/${lineId}/resolve`, body);

  test('a credit is one seller_credit entry back to the wallet, once; the invoice is resolved', async () => {
    const { org, token, invoice, line } = await disputed();
    const before = await walletAndLedger(env, org);
    const res = await resolve(token, invoice.id, line.id, {
      expectedVersion: 1,
      remedy: 'credit',
      amountMinor: 3_000,
      reason: 'Billed above our count',
    });
    expect(res.status).toBe(200);
    const body = await json<{ line: InvoiceLineView }>(res);
    expect(body.line).toMatchObject({
      status: 'resolved',
      remedy: 'credit',
      remedyAmountMinor: 3_000,
      resolvedBy: `${org}-buyer`,
      reason: 'Billed above our count',
      version: 2,
    });
    const entries = await env.db('wallet_entries').where({ subject_type: 'invoice_line', subject_id: line.id });
    expect(entries.map((e) => [e.kind, Number(e.amount_minor), Number(e.balance_delta_minor)])).toEqual([['seller_credit', 3_000, 3_000]]);
    const after = await walletAndLedger(env, org);
    expect(after.consistent).toBe(true);
    expect(after.wallet.balanceMinor - before.wallet.balanceMinor).toBe(3_000);
    const read = await json<Imported>(await api.fetch(`/api/v1/billing/invoices/${invoice.id}`, { token }));
    expect(read.invoice).toMatchObject({ status: 'resolved', version: 2 });
    expect((await events(org, 'invoice.resolved'))[0]!.body).toMatchObject({ remedy: 'credit', amountMinor: 3_000 });

    // The same remedy again: the line is no longer disputed, and no money moves.
    const snap = await snapshot(env, org);
    const again = await resolve(token, invoice.id, line.id, {
      expectedVersion: 2,
      remedy: 'credit',
      amountMinor: 3_000,
      reason: 'Billed above our count',
    });
    expect(again.status).toBe(409);
    expect((await json<{ code: string }>(again)).code).toBe('not_disputed');
    expect(await snapshot(env, org)).toEqual(snap);
  });

  test('an invoice adjustment is one invoice_adjustment entry of what the seller took off, moving no wallet money', async () => {
    const { org, token, invoice, line } = await disputed();
    const before = await walletAndLedger(env, org);
    const res = await resolve(token, invoice.id, line.id, {
      expectedVersion: 1,
      remedy: 'invoice_adjustment',
      amountMinor: 12_000,
      reason: 'Reissued at our count',
    });
    expect(res.status).toBe(200);
    const entries = await env.db('wallet_entries').where({ subject_type: 'invoice_line', subject_id: line.id });
    expect(entries.map((e) => [e.kind, Number(e.amount_minor), Number(e.balance_delta_minor)])).toEqual([['invoice_adjustment', 3_000, 0]]);
    expect((await walletAndLedger(env, org)).wallet).toEqual(before.wallet);
  });

  test('additional delivery owes a make-good by a date; accepted moves nothing', async () => {
    const { org, token, invoice, line } = await disputed();
    const res = await resolve(token, invoice.id, line.id, {
      expectedVersion: 1,
      remedy: 'additional_delivery',
      owedValueMinor: 3_000,
      dueBy: '2099-12-31',
      reason: 'Run the shortfall in April',
    });
    expect(res.status).toBe(200);
    const { makegood } = await json<{ makegood: { owedImpressions: number; status: string; dueBy: string } }>(res);
    // 3,000 at the month's final 12,000 for 120,000 impressions.
    expect(makegood).toMatchObject({ owedImpressions: 30_000, status: 'owed', dueBy: '2099-12-31' });
    expect(await env.db('wallet_entries').where({ subject_type: 'invoice_line', subject_id: line.id })).toEqual([]);
    expect((await events(org, 'makegood.owed')).length).toBe(1);
    const listed = await json<{ makegoods: unknown[] }>(await api.fetch('/api/v1/billing/makegoods?status=owed', { token }));
    expect(listed.makegoods).toHaveLength(1);
  });

  const bad: Array<[string, Record<string, unknown>, number, string]> = [
    ['a stale version', { expectedVersion: 2, remedy: 'accepted', reason: 'Fine by us' }, 409, 'version_conflict'],
    [
      'a credit above the invoiced amount',
      { expectedVersion: 1, remedy: 'credit', amountMinor: 15_001, reason: 'Too much' },
      400,
      'validation_failed',
    ],
    ['a credit without its amount', { expectedVersion: 1, remedy: 'credit', reason: 'How much?' }, 400, 'validation_failed'],
    [
      'an adjustment that does not reduce',
      { expectedVersion: 1, remedy: 'invoice_adjustment', amountMinor: 15_000, reason: 'Same' },
      400,
      'validation_failed',
    ],
    [
      'a make-good due today',
      { expectedVersion: 1, remedy: 'additional_delivery', owedImpressions: 5, dueBy: '2000-01-01', reason: 'Past' },
      400,
      'validation_failed',
    ],
    ['accepted with an amount', { expectedVersion: 1, remedy: 'accepted', amountMinor: 1, reason: 'Odd' }, 400, 'validation_failed'],
    ['an unknown remedy', { expectedVersion: 1, remedy: 'refund', reason: 'Nope' }, 400, 'validation_failed'],
  ];
  test.each(bad)('%s is refused and nothing changes', async (_what, body, status, code) => {
    const { org, token, invoice, line } = await disputed();
    const before = await snapshot(env, org);
    const res = await resolve(token, invoice.id, line.id, body);
    expect(res.status).toBe(status);
    expect((await json<{ code: string }>(res)).code).toBe(code);
    expect(await snapshot(env, org)).toEqual(before);
  });

  test('a delegated agent cannot resolve (403); another workspace gets 404; nothing changes', async () => {
    const { org, invoice, line } = await disputed();
    const before = await snapshot(env, org);
    const agent = await env.issuer.token({ org, agent: 'assistant' });
    const body = { expectedVersion: 1, remedy: 'accepted', reason: 'Fine by us' };
    expect((await resolve(agent, invoice.id, line.id, body)).status).toBe(403);
    expect((await resolve(await env.issuer.token({ org: 'org-inv-other' }), invoice.id, line.id, body)).status).toBe(404);
    expect(await snapshot(env, org)).toEqual(before);
  });
});
