import { claimDue, type DueTable } from '../../shared/db/claim-due';
import { claimDueTasks } from '../../shared/suppliers/supplier-tasks';
import { claimReviewsAtSupplier } from '../../shared/creatives/reviews-at-supplier';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The claim behind every scheduled question to a supplier (pending bookings, reviews it holds):
 * concurrent checkers share the due rows without overlap, a claimed row waits an interval, and
 * only the adapter's waiting rows whose time has come are taken.
 */
let t: TestDatabase;
const ASKED: DueTable = { table: 'asked', id: 'id', waiting: 'waiting', dueAt: 'due_at', count: 'asks' };
const INTERVAL_MS = 1_500;

beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.raw(`create table asked (id int primary key, adapter_key text not null, status text not null,
                  due_at timestamptz not null, asks int not null default 0)`);
});
afterAll(async () => {
  await t.drop();
});

const claim = (adapterKey: string, limit = 20) =>
  claimDue<{ id: number; asks: number }>(t.db, ASKED, ['id', 'asks'], adapterKey, INTERVAL_MS, limit);

test('two checkers at once take disjoint rows, only due waiting rows of their adapter, each counted once', async () => {
  const row = (id: number, adapter_key: string, status: string, due: string) => ({ id, adapter_key, status, due_at: t.db.raw(due) });
  await t
    .db('asked')
    .insert([
      ...Array.from({ length: 30 }, (_, i) => row(i, 'seller-a', 'waiting', `now() - interval '1 second'`)),
      ...Array.from({ length: 5 }, (_, i) => row(100 + i, 'seller-b', 'waiting', `now() - interval '1 second'`)),
      ...Array.from({ length: 5 }, (_, i) => row(200 + i, 'seller-a', 'waiting', `now() + interval '1 hour'`)),
      ...Array.from({ length: 5 }, (_, i) => row(300 + i, 'seller-a', 'done', `now() - interval '1 second'`)),
    ]);

  const [first, second] = await Promise.all([claim('seller-a'), claim('seller-a')]);
  const ids = [...first, ...second].map((r) => r.id).sort((a, b) => a - b);
  expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => i));
  expect(Math.max(first.length, second.length)).toBe(20);
  expect([...first, ...second].every((r) => r.asks === 1)).toBe(true);

  // Claimed rows wait an interval; the others were not touched.
  expect(await claim('seller-a')).toEqual([]);
  const untouched = await t.db('asked').where('id', '>=', 100).andWhere('asks', '>', 0).count({ n: '*' });
  expect(Number(untouched[0]!.n)).toBe(0);

  await new Promise((r) => setTimeout(r, INTERVAL_MS + 200));
  const again = await claim('seller-a', 100);
  expect(again.map((r) => r.id).sort((a, b) => a - b)).toEqual(ids);
  expect(again.every((r) => r.asks === 2)).toBe(true);
});

test("the supplier tasks' and the reviews' claims run against their tables", async () => {
  expect(await claimDueTasks(t.db, 'sandbox-ctv', INTERVAL_MS)).toEqual([]);
  expect(await claimReviewsAtSupplier(t.db, 'sandbox-ctv', INTERVAL_MS)).toEqual([]);
});
