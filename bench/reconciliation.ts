import { randomUUID } from 'node:crypto';
import type { BenchService } from './service';
import { figures } from './support';
import { latencies, pct, seedRunning, START } from './delivery';
import { ADAPTER_IMPLEMENTATIONS } from '../workers/adapters/registry';
import { pollDelivery } from '../workers/delivery-poller';
import { createLogger } from '../shared/logger';
import { addDays } from '../shared/dates';
import { settleFinality } from '../shared/delivery/finality';

const LINES = Number(process.env.BENCH_RECONCILIATION_LINES ?? 10_000);
const DAYS = 30;
const SELLER = { adapterKey: 'sandbox-audio', channel: 'audio' };

/**
 * Reconciliation at scale: a month of delivery for 10,000 sandbox-audio lines made final, then a
 * 10,000-line invoice for it imported and matched over HTTP (target: finality and matching under
 * 30 s; 1 line in 20 billed 20% over, so disputed with its evidence), then the seller's statement
 * for the month read (target p95 < 100 ms) beside the auth-context read measured the same way.
 */
export async function benchReconciliation(service: BenchService): Promise<void> {
  const { db } = service;
  const org = 'bench-org';
  await seedRunning(db, org, 'Reconciliation ', LINES / 10, 10, DAYS, SELLER);
  await db.raw('analyze');
  const adapter = ADAPTER_IMPLEMENTATIONS.get(SELLER.adapterKey)!;
  // The month as the seller reported it: every day three days old or more is called final.
  const real = new Date(`${addDays(START, DAYS + 4)}T06:00:00Z`);
  await pollDelivery(db, adapter, {
    batchSize: 500,
    restatementDays: DAYS + 5,
    finalizationHours: 72,
    callsPerSecond: 1_000,
    timeoutMs: 30_000,
    sandboxSlowMs: 0,
    pacingTolerance: 0.15,
    verification: { reportingDelayHours: 0, tolerancePercent: 1 },
    logger: createLogger('silent'),
    real,
  });
  await db.raw('analyze');

  const period = START.slice(0, 7);
  // The poll already made the month final on the seller's word; measure it made final by the window instead.
  await db('delivery_month_closes').where({ advertiser_id: org, adapter_key: SELLER.adapterKey }).delete();
  await db.raw(
    `update delivery_days d set final_at = null, final_source = null from booking_lines l where l.id = d.line_id and l.adapter_key = ?`,
    [SELLER.adapterKey],
  );
  await db.raw('analyze');
  const started = performance.now();
  const finality = await settleFinality(db, SELLER.adapterKey, 72, { real });
  const finalSeconds = (performance.now() - started) / 1000;
  const figuresOf = (await db.raw(
    `select l.id, sum(d.spend_minor)::bigint as spend, sum(d.impressions)::bigint as impressions
       from booking_lines l join delivery_days d on d.line_id = l.id
      where l.advertiser_id = ? and l.adapter_key = ? group by l.id`,
    [org, SELLER.adapterKey],
  )) as { rows: Array<{ id: string; spend: string; impressions: string }> };
  const lines = figuresOf.rows.map((r, i) => ({
    lineId: r.id,
    impressions: Number(r.impressions),
    amountMinor: i % 20 === 0 ? Math.round(Number(r.spend) * 1.2) : Number(r.spend),
  }));
  const body = JSON.stringify({
    invoiceNumber: `BENCH-${randomUUID().slice(0, 8)}`,
    seller: SELLER.adapterKey,
    period,
    currency: 'GBP',
    lines,
  });
  const importStarted = performance.now();
  const res = await fetch(`${service.url}/api/v1/billing/invoices`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body,
  });
  const answer = (await res.json()) as { invoice?: { counts: { approved: number; disputed: number } }; detail?: string };
  const importSeconds = (performance.now() - importStarted) / 1000;
  if (res.status !== 201) throw new Error(`invoice import: ${res.status} ${answer.detail ?? ''}`);
  const total = finalSeconds + importSeconds;
  const counts = answer.invoice!.counts;
  console.log(`\nReconciliation: ${lines.length} lines × ${DAYS} days, a ${lines.length}-line invoice`);
  console.log(
    `finality ${finalSeconds.toFixed(1)} s (${finality.closedMonths} line-months closed) + import and match ${importSeconds.toFixed(1)} s = ${total.toFixed(1)} s (target < 30 s): ${total < 30 ? 'met' : 'NOT met'}; ${counts.approved} approved, ${counts.disputed} disputed`,
  );
  figures.push({
    name: `reconcile a ${lines.length}-line invoice against a month of final delivery`,
    value: total,
    unit: 's',
    target: '< 30 s',
    met: total < 30 && counts.disputed === lines.length / 20 && finality.closedMonths === lines.length,
  });

  // Totals over every line, and the first page of lines (200).
  const path = `/api/v1/billing/statements/${SELLER.adapterKey}/${period}`;
  await latencies(service, path); // warm up
  const read = await latencies(service, path);
  const baseline = await latencies(service, '/api/v1/auth/context');
  const p95 = pct(read, 95);
  console.log(
    `GET statement (totals of ${lines.length} lines, a page of 200) p50 ${pct(read, 50).toFixed(1)} ms p95 ${p95.toFixed(1)} ms (target < 100 ms): ${p95 < 100 ? 'met' : 'NOT met'}; auth context p95 ${pct(baseline, 95).toFixed(1)} ms`,
  );
  figures.push({
    name: `GET /api/v1/billing/statements/{seller}/{period} p95, ${lines.length} lines (a page of 200)`,
    value: p95,
    unit: 'ms',
    baseline: pct(baseline, 95),
    target: '< 100 ms',
    met: p95 < 100,
  });
}
