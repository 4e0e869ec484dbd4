import { LINE_OPERATIONS } from '../../shared/adapters/adapter';
import { canMove, LINE_STATUSES, type LineOperation, type LineStatus } from '../../shared/bookings/lines/state';
import { OPERATION_STARTS_SQL, OPERATION_KINDS, OPERATIONS, operationStates } from '../../shared/bookings/lines/operations';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

/** The values a CHECK constraint's `in (...)` list allows, as the database holds it (and enforces: validated). */
async function checkList(name: string): Promise<string[]> {
  const { rows } = await database.db.raw<{ rows: Array<{ def: string }> }>(
    'select pg_get_constraintdef(oid) as def from pg_constraint where conname = ? and contype = ? and convalidated',
    [name, 'c'],
  );
  expect(rows).toHaveLength(1);
  return [...rows[0]!.def.matchAll(/'([^']+)'::/g)].map((m) => m[1]!).sort();
}

describe('the line operations registry is the one home of the line state machine', () => {
  test('the database allows exactly the statuses and operation kinds the registry declares', async () => {
    expect(await checkList('booking_lines_status')).toEqual([...LINE_STATUSES].sort());
    expect(await checkList('booking_lines_operation')).toEqual(Object.keys(OPERATIONS).sort());
    expect(await checkList('line_operations_kind')).toEqual([...OPERATION_KINDS].sort());
    // The adapter contract names the same operations.
    expect([...LINE_OPERATIONS].sort()).toEqual([...OPERATION_KINDS].sort());
  });

  test('the start statement waits on the states each operation declares, starts it under its event, and batches only those that may', async () => {
    const { rows } = await database.db.raw<{
      rows: Array<{ kind: LineOperation; requested: string | null; in_flight: string | null; started: string; batches: boolean }>;
    }>(`select * from ${OPERATION_STARTS_SQL} order by kind`);
    expect(rows.map((r) => r.kind)).toEqual(Object.keys(OPERATIONS).sort());
    for (const r of rows) {
      // Null: the status the line was asked from.
      const from = 'stopped';
      const s = operationStates(r.kind, from);
      expect([r.requested ?? from, r.in_flight ?? from, r.started, r.batches]).toEqual([
        s.requested,
        s.inFlight,
        OPERATIONS[r.kind].events.started,
        OPERATIONS[r.kind].batches,
      ]);
    }
    // A booking batches like a pause; a budget change may move money: it is never batched.
    const batched = rows.filter((r) => r.batches).map((r) => r.kind);
    expect(batched).toEqual(expect.arrayContaining(['book', 'pause', 'stop', 'resume']));
    expect(batched).not.toContain('change-budget');
  });

  test('the moves a line may make are the ones it has always been allowed, and no more', () => {
    const allowed: Record<LineStatus, LineStatus[]> = {
      queued: ['in-progress', 'rejected', 'stop-requested'],
      'in-progress': ['confirmed', 'rejected', 'reconciliation-required', 'stop-requested', 'stopped'],
      'reconciliation-required': ['confirmed', 'rejected', 'stopped', 'stop-requested'],
      confirmed: ['stop-requested', 'reconciliation-required'],
      'stop-requested': ['stopping', 'stopped'],
      stopping: ['stopped', 'confirmed', 'reconciliation-required'],
      rejected: [],
      stopped: ['queued', 'stop-requested', 'reconciliation-required'],
    };
    for (const from of LINE_STATUSES) {
      expect([from, LINE_STATUSES.filter((to) => canMove(from, to))]).toEqual([
        from,
        LINE_STATUSES.filter((to) => allowed[from].includes(to)),
      ]);
    }
  });

  test.each([
    ['book', 'queued', { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'rejected' }],
    ['pause', 'confirmed', { requested: 'stop-requested', inFlight: 'stopping', applied: 'stopped', refused: 'confirmed' }],
    ['stop', 'stopped', { requested: 'stop-requested', inFlight: 'stopping', applied: 'stopped', refused: 'stopped' }],
    ['resume', 'stopped', { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'stopped' }],
    ['change-budget', 'stopped', { requested: 'stopped', inFlight: 'stopped', applied: 'stopped', refused: 'stopped' }],
  ] as const)('a %s asked of a %s line', (kind, from, states) => {
    expect(operationStates(kind, from)).toEqual(states);
  });
});
