import fc from 'fast-check';
import { createTestEnv, type TestEnv } from '../support/api';
import { walletAndLedger } from '../support/wallet';
import { day } from '../delivery/support';
import { APRIL, deliver, finalMarch } from './support';
import { runningTotals, statementFromRows } from './statement-oracle';
import { settleFinality } from '../../shared/delivery/finality';
import { burnDownMakegoods } from '../../shared/delivery/makegoods';
import { importInvoice } from '../../shared/reconciliation/invoice-import';
import { resolveDispute, ResolveDisputeSchema } from '../../shared/reconciliation/disputes';
import { sellerStatement } from '../../shared/reconciliation/statement';
import { RawBody } from '../../shared/measurement/raw-body';
import { Problem } from '../../shared/errors';
import type { Principal } from '../../shared/auth/principal';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const BUDGETS = [40_000, 25_000];
type Op =
  | { kind: 'deliver'; line: number; day: number; spend: number; final: boolean }
  | { kind: 'finalize' }
  | { kind: 'invoice'; over: number[] }
  | {
      kind: 'resolve';
      line: number;
      remedy: 'credit' | 'invoice_adjustment' | 'additional_delivery' | 'accepted';
      amount: number;
      version: number;
    }
  | { kind: 'makegood'; line: number; day: number; impressions: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('deliver' as const),
    line: fc.nat({ max: 1 }),
    // Day 0 is the last day of February: delivery before the month, which the month's billable figure follows.
    day: fc.integer({ min: 0, max: 4 }),
    spend: fc.integer({ min: 0, max: 30_000 }),
    final: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('finalize' as const) }),
  fc.record({ kind: fc.constant('invoice' as const), over: fc.array(fc.integer({ min: -40, max: 40 }), { minLength: 2, maxLength: 2 }) }),
  fc.record({
    kind: fc.constant('resolve' as const),
    line: fc.nat({ max: 1 }),
    remedy: fc.constantFrom('credit' as const, 'invoice_adjustment' as const, 'additional_delivery' as const, 'accepted' as const),
    amount: fc.integer({ min: 0, max: 40_000 }),
    version: fc.integer({ min: 1, max: 2 }),
  }),
  fc.record({
    kind: fc.constant('makegood' as const),
    line: fc.nat({ max: 1 }),
    day: fc.integer({ min: 10, max: 20 }),
    impressions: fc.integer({ min: 1, max: 50_000 }),
  }),
);

describe('reconciliation keeps the money straight, whatever the order', () => {
  test('over random interleavings of delivery, restatements, finalization, invoices, disputes, remedies and make-good delivery', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        const org = `org-rprop-${run++}`;
        // Nothing delivered yet: the month is not final until a `finalize` step, so deliveries may come first.
        const { bookingId, lineIds } = await finalMarch(env, org, BUDGETS, [[], []]);
        await env.db('delivery_month_closes').where({ advertiser_id: org }).delete();
        const p: Principal = {
          userId: `${org}-buyer`,
          advertiserId: org,
          product: 'flightdeck',
          channels: [],
          permissions: [],
          agentClientId: null,
          via: 'api',
        };
        const finalFigures = new Map<string, number>();
        let invoices = 0;
        for (const o of ops) {
          const before = await walletAndLedger(env, org);
          try {
            if (o.kind === 'deliver') {
              const lineId = lineIds[o.line]!;
              await deliver(env, { lineId, bookingId, advertiserId: org }, [
                { ...day(o.day === 0 ? '2099-02-28' : `2099-03-0${o.day}`, o.spend, o.spend * 10), final: o.final },
              ]);
            } else if (o.kind === 'finalize') {
              await settleFinality(env.db, 'live-ctv', 72, { real: APRIL });
            } else if (o.kind === 'invoice') {
              const figures = await env
                .db('delivery_days')
                .whereIn('line_id', lineIds)
                .groupBy('line_id')
                .select('line_id', env.db.raw('sum(spend_minor) as s'));
              const spent = (i: number) => Number(figures.find((f) => f.line_id === lineIds[i])?.s ?? 0);
              const lines = lineIds.map((lineId, i) => ({
                lineId,
                impressions: 1,
                amountMinor: Math.max(0, Math.round((Math.min(spent(i), BUDGETS[i]!) * (100 + o.over[i]!)) / 100)),
              }));
              const body = { invoiceNumber: `P-${invoices++}`, seller: 'live-ctv', period: '2099-03', currency: 'GBP', lines };
              await importInvoice(env.db, p, new RawBody(Buffer.from(JSON.stringify(body))), 'application/json', () => ({
                finalizationHours: 72,
                maxVariancePercent: 10,
              }));
            } else if (o.kind === 'resolve') {
              const line = await env.db('invoice_lines').where({ advertiser_id: org, line_id: lineIds[o.line] }).first();
              if (line) {
                const body = ResolveDisputeSchema.safeParse({
                  expectedVersion: o.version,
                  remedy: o.remedy,
                  reason: 'property',
                  ...(o.remedy === 'credit' || o.remedy === 'invoice_adjustment' ? { amountMinor: o.amount } : {}),
                  ...(o.remedy === 'additional_delivery' ? { owedImpressions: 1 + o.amount, dueBy: '2099-03-25' } : {}),
                });
                if (body.success) await resolveDispute(env.db, p, line.invoice_id, line.id, body.data, new Date('2099-03-09T00:00:00Z'));
              }
            } else {
              const lineId = lineIds[o.line]!;
              await env.db.transaction(async (trx) => {
                await deliver(env, { lineId, bookingId, advertiserId: org }, [{ ...day(`2099-03-${o.day}`, 0, o.impressions) }]);
                await burnDownMakegoods(trx, [lineId]);
              });
            }
          } catch (err) {
            // A refusal is a problem the caller can read, and it changed nothing.
            expect(err).toBeInstanceOf(Problem);
            expect(await walletAndLedger(env, org)).toEqual(before);
          }

          // The wallet is always the sum of its entries.
          expect((await walletAndLedger(env, org)).consistent).toBe(true);
          // A final day never changes its figures.
          const days = await env
            .db('delivery_days')
            .whereIn('line_id', lineIds)
            .whereNotNull('final_at')
            .select('line_id', 'day', 'spend_minor');
          for (const d of days) {
            const key = `${d.line_id}|${d.day}`;
            if (!finalFigures.has(key)) finalFigures.set(key, Number(d.spend_minor));
            expect(Number(d.spend_minor)).toBe(finalFigures.get(key));
          }
          // Every invoice line is in exactly one state; a resolved one has its remedy, the others none.
          const states = await env.db('invoice_lines').where({ advertiser_id: org }).select('id', 'status', 'remedy');
          for (const s of states) {
            expect(['approved', 'disputed', 'resolved']).toContain(s.status);
            expect(s.remedy === null).toBe(s.status !== 'resolved');
          }
          // No remedy moves money twice: one entry at most per invoice line, and only for a credit or adjustment.
          const remedies = await env
            .db('wallet_entries')
            .where({ advertiser_id: org, subject_type: 'invoice_line' })
            .select('subject_id', 'kind');
          expect(new Set(remedies.map((r) => r.subject_id)).size).toBe(remedies.length);
          const moving = await env
            .db('invoice_lines')
            .where({ advertiser_id: org })
            .whereIn('remedy', ['credit', 'invoice_adjustment'])
            .pluck('id');
          expect(remedies.map((r) => r.subject_id).sort()).toEqual(moving.sort());
          // Captured spend follows the delivered figures, capped at the budget.
          for (const [i, lineId] of lineIds.entries()) {
            const delivered = Number((await env.db('delivery_days').where({ line_id: lineId }).sum('spend_minor as s').first())!.s ?? 0);
            const captured = await env
              .db('wallet_entries')
              .where({ line_id: lineId })
              .whereIn('kind', ['capture', 'capture_reversal'])
              .first(env.db.raw("coalesce(sum(case when kind = 'capture' then amount_minor else -amount_minor end), 0) as c"));
            expect(Number(captured.c)).toBe(Math.min(delivered, BUDGETS[i]!));
          }
          // The running totals the statement reads are the days and the ledger summed afresh, and the
          // statement (its lines and its totals) is what the rows themselves say.
          const totals = await runningTotals(env, org);
          expect(totals.stored).toEqual(totals.summed);
          const statement = await sellerStatement(env.db, p, 'live-ctv', '2099-03');
          const expected = await statementFromRows(env, org, 'live-ctv', '2099-03');
          expect(statement.totals).toEqual(expected.totals);
          const figures = expected.lines.map((l) => Object.keys(l));
          expect(statement.lines.map((l, i) => Object.fromEntries(Object.entries(l).filter(([k]) => figures[i]?.includes(k))))).toEqual(
            expected.lines,
          );
        }
      }),
      {
        numRuns: 25,
        // Always: a line that delivered before the month, so that the month's billable figure is what its budget had left.
        examples: [
          [
            [
              { kind: 'deliver', line: 0, day: 0, spend: 20_000, final: false },
              { kind: 'deliver', line: 0, day: 1, spend: 30_000, final: false },
              { kind: 'finalize' },
              { kind: 'invoice', over: [5, 0] },
            ],
          ],
        ],
      },
    );
  });
});

describe('the running totals a statement reads', () => {
  test('stay the rows summed afresh when reports, restatements and finality of the same lines run at once', async () => {
    const org = 'org-rprop-concurrent';
    const { bookingId, lineIds } = await finalMarch(env, org, [300_000, 300_000, 300_000], [[], [], []]);
    await env.db('delivery_month_closes').where({ advertiser_id: org }).delete();
    const report = (round: number) =>
      lineIds.map((lineId, i) =>
        deliver(
          env,
          { lineId, bookingId, advertiserId: org },
          [1, 2, 3, 4, 5].map((d) => ({
            ...day(`2099-03-0${d}`, 1_000 * ((round + i + d) % 7), 100 * round),
            final: (round + d) % 5 === 0,
          })),
        ),
      );
    const outcomes = await Promise.allSettled([
      ...report(1),
      ...report(2),
      settleFinality(env.db, 'live-ctv', 72, { real: new Date('2099-03-05T00:00:00Z') }),
      ...report(3),
      ...report(4),
      settleFinality(env.db, 'live-ctv', 72, { real: APRIL }),
    ]);
    // Writers that collided may have been refused whole (a deadlock rolls one back); most are through.
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    for (const r of refused) expect(String((r.reason as { code?: string }).code)).toMatch(/^40P01|40001$/);
    expect(refused.length).toBeLessThan(outcomes.length / 2);
    expect(await env.db('delivery_days').whereIn('line_id', lineIds).count({ n: '*' })).toEqual([{ n: '15' }]);
    const totals = await runningTotals(env, org);
    expect(totals.stored.days.length).toBeGreaterThan(0);
    expect(totals.stored).toEqual(totals.summed);
  });
});
