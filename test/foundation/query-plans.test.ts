import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { latestBookAttemptSql } from '../../shared/bookings/lines/operation-store';

/**
 * Reads made once per line or per event must find their rows by an index, whatever the size of
 * the table: with sequential scans priced out, a plan that still scans has no index to use, and
 * would read every row ever written (on a small test table the planner may scan by choice).
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function planOf(sql: string, bindings: string[]): Promise<string> {
  return t.db.transaction(async (trx) => {
    await trx.raw('set local enable_seqscan = off');
    const { rows } = await trx.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(`explain ${sql}`, bindings);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

test("a line's latest booking attempt (read for every line an operation changes) is found by index", async () => {
  const plan = await planOf(`select ${latestBookAttemptSql('l')} from booking_lines l where l.id = ?`, [randomUUID()]);
  expect(plan).toContain('supplier_attempts');
  expect(plan).not.toMatch(/Seq Scan on supplier_attempts/);
});

test('whether a webhook event is wanted (asked for every booking move) is found by index', async () => {
  // The function's test as stored, its arguments bound: a plan of the call alone would not show its body.
  const { prosrc } = await t.db('pg_proc').where({ proname: 'webhook_wanted' }).first('prosrc');
  const test = /return\s+(exists[\s\S]*?);\s*end/.exec(prosrc as string)?.[1] ?? '';
  const body = `select ${test.replace(/p_workspace/g, '?::text').replace(/p_type/g, '?::text')}`;
  expect(body).toContain('webhook_subscriptions');
  const plan = await planOf(body, ['org-a', 'booking.line.status_changed']);
  expect(plan).not.toMatch(/Seq Scan on webhook_subscriptions/);
});
