import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, post, type BookingBody } from '../support/bookings';
import { assignClient, findActiveStaff, grantStaff, revokeStaff } from '../../shared/staff/staff-store';
import { listNeedingAttention } from '../../shared/bookings/fulfilment-queue';

const QUEUE = '/api/v1/internal/fulfilment/bookings';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EVIDENCE = 'Evidence from the supplier desk.';

interface Page {
  bookings: BookingBody[];
  nextCursor: string | null;
}

let env: TestEnv;
let api: TestApi;
const t: Record<string, string> = {};
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  const staff: Array<[string, string[]]> = [
    ['q-staff', ['org-a', 'org-c']],
    ['q-staff-2', ['org-a']],
    ['q-empty', []],
    ['q-revoked', ['org-a']],
    ['q-pager', ['org-p']],
    ['q-bulk', ['org-bulk']],
  ];
  for (const [user, orgs] of staff) {
    await grantStaff(env.staff, user);
    for (const org of orgs) await assignClient(env.staff, user, org);
    t[user] = await env.issuer.token({ org: 'staff-org', user });
  }
  await revokeStaff(env.staff, 'q-revoked');
  t.agent = await env.issuer.token({ org: 'staff-org', user: 'q-staff', agent: 'bot' });
  t.customer = await env.issuer.token({ org: 'org-a', user: 'org-a-buyer', permissions: ['operator:reconcile'] });
});
afterAll(() => env.close());

const launch = async (org: string, adapterKey = 'manual') =>
  (await launchPlan(env, api, [{ channel: 'ctv', adapterKey, budgetMinor: 10_000 }], org)).booking;
const list = (token: string, query = '') => api.fetch(`${QUEUE}${query ? `?${query}` : ''}`, { token });
async function page(token: string, query = ''): Promise<Page> {
  const res = await list(token, query);
  if (res.status !== 200) throw new Error(`list ${query} failed: ${res.status} ${await res.text()}`);
  return json<Page>(res);
}
const ids = async (query: string, token = t['q-staff']!) => (await page(token, query)).bookings.map((b) => b.id);
const lineOp = async (token: string, bookingId: string, name: string, body: Record<string, unknown>) => {
  const line = (await env.db('booking_lines').where({ booking_id: bookingId }).first('id', 'version'))!;
  const res = await post(api, token, `${QUEUE}/${bookingId}/lines/${line.id}/${name}`, { expectedVersion: line.version, ...body });
  expect(res.status).toBe(200);
};
const hourAgo = () => new Date(Date.now() - 3600_000);

describe('who sees the queue', () => {
  let unknownRoute: Record<string, unknown>;
  beforeAll(async () => {
    const res = await api.fetch('/api/v1/internal/nothing-here', { token: t.customer });
    unknownRoute = await json(res);
  });

  test.each([
    ['a customer of an assigned client, even with operator:reconcile', 'customer'],
    ['a delegated agent acting for a staff member', 'agent'],
    ['a revoked staff member', 'q-revoked'],
  ])('%s gets the same 404 problem+json as an unknown route', async (_who, key) => {
    const res = await list(t[key]!);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = await json(res);
    expect({ ...body, requestId: null }).toEqual({ ...unknownRoute, requestId: null });
  });

  test('a request without a token is refused with 401', async () => {
    expect((await api.fetch(QUEUE)).status).toBe(401);
  });

  test('a staff member with no assignments gets an empty list and no cursor', async () => {
    expect(await page(t['q-empty']!)).toEqual({ bookings: [], nextCursor: null });
  });
});

describe('filters', () => {
  const b: Record<string, BookingBody> = {};
  const expectIds = async (query: string, keys: string[]) => expect(await ids(query)).toEqual(keys.map((k) => b[k]!.id));
  beforeAll(async () => {
    b.queued = await launch('org-a');
    b.mine = await launch('org-a');
    b.confirmed = await launch('org-a');
    b.computerUse = await launch('org-a', 'computer-use');
    b.overdue = await launch('org-a');
    b.others = await launch('org-a');
    b.clientC = await launch('org-c');
    b.unassignedClient = await launch('org-b');
    await lineOp(t['q-staff']!, b.mine.id, 'claim', {});
    await lineOp(t['q-staff-2']!, b.others.id, 'claim', {});
    await lineOp(t['q-staff']!, b.confirmed.id, 'claim', {});
    await lineOp(t['q-staff']!, b.confirmed.id, 'start', {});
    await lineOp(t['q-staff']!, b.confirmed.id, 'confirm', { providerReference: 'IO-9', evidence: EVIDENCE });
    // Both are past their confirmation deadline; only the open one is overdue.
    await env.db('bookings').whereIn('id', [b.overdue.id, b.confirmed.id]).update({ confirmation_due_at: hourAgo() });
  });

  test('by default only active bookings of assigned clients are listed, oldest first', async () => {
    await expectIds('', ['queued', 'mine', 'computerUse', 'overdue', 'others', 'clientC']);
    await expectIds('status=active&assignee=all', ['queued', 'mine', 'computerUse', 'overdue', 'others', 'clientC']);
  });

  test("status=all adds settled bookings, but never another client's", async () => {
    await expectIds('status=all', ['queued', 'mine', 'confirmed', 'computerUse', 'overdue', 'others', 'clientC']);
    const all = await page(t['q-staff']!, 'status=all');
    expect(all.bookings.find((x) => x.id === b.confirmed!.id)!.status).toBe('confirmed');
    expect(all.bookings.every((x) => x.advertiserId !== 'org-b')).toBe(true);
  });

  test('assignee=me lists bookings with a line claimed by the caller; unassigned lists those with an open unclaimed line', async () => {
    await expectIds('assignee=me', ['mine']);
    await expectIds('assignee=me&status=all', ['mine', 'confirmed']);
    await expectIds('assignee=unassigned', ['queued', 'computerUse', 'overdue', 'clientC']);
    expect(await ids('assignee=me', t['q-staff-2'])).toEqual([b.others!.id]);
  });

  test('advertiserId narrows to one assigned client; an unassigned client yields nothing', async () => {
    await expectIds('advertiserId=org-c', ['clientC']);
    await expectIds('advertiserId=org-a&status=all', ['queued', 'mine', 'confirmed', 'computerUse', 'overdue', 'others']);
    expect(await page(t['q-staff']!, 'advertiserId=org-b')).toEqual({ bookings: [], nextCursor: null });
  });

  test('adapterKey lists bookings with a line on that adapter', async () => {
    await expectIds('adapterKey=computer-use', ['computerUse']);
    await expectIds('adapterKey=manual', ['queued', 'mine', 'overdue', 'others', 'clientC']);
    await expectIds('adapterKey=sandbox-ctv', []);
  });

  test('overdue=true lists open bookings past their confirmation deadline; overdue=false the rest', async () => {
    await expectIds('overdue=true', ['overdue']);
    await expectIds('overdue=true&status=all', ['overdue']);
    await expectIds('overdue=false', ['queued', 'mine', 'computerUse', 'others', 'clientC']);
    await expectIds('overdue=false&status=all', ['queued', 'mine', 'confirmed', 'computerUse', 'others', 'clientC']);
    await expectIds('overdue=true&assignee=me', []);
    const all = await page(t['q-staff']!, 'status=all');
    expect(Object.fromEntries(all.bookings.map((x) => [x.id, x.overdue]))).toEqual(
      Object.fromEntries(
        ['queued', 'mine', 'confirmed', 'computerUse', 'overdue', 'others', 'clientC'].map((k) => [b[k]!.id, k === 'overdue']),
      ),
    );
  });

  test('every booking has every field of the spec, with every line and event field', async () => {
    const { bookings } = await page(t['q-staff']!, 'status=all');
    expect(bookings).toHaveLength(7);
    const iso = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    const isoOrNull = (v: unknown) => (v === null ? null : iso);
    for (const booking of bookings) {
      expect(Object.keys(booking.client as object).sort()).toEqual(['id', 'name']);
      expect(booking).toMatchObject({
        id: expect.stringMatching(UUID),
        advertiserId: expect.stringMatching(/^org-[ac]$/),
        campaignId: expect.stringMatching(UUID),
        campaignName: 'Spring launch',
        client: { id: booking.advertiserId, name: 'Acme Drinks' },
        campaignStatus: expect.stringMatching(/^.+$/),
        closeoutPending: false,
        flightEnded: false,
        overdue: expect.any(Boolean),
        version: expect.any(Number),
        status: expect.stringMatching(/^(queued|in-progress|confirmed)$/),
        submittedAt: iso,
        confirmationDueAt: iso,
        startDate: '2099-03-01',
        endDate: '2099-03-31',
        executionMode: 'sandbox',
        mediaBudgetMinor: 10_000,
        maximumCommitmentMinor: 10_000,
        currency: 'GBP',
        snapshotDigest: expect.stringMatching(/^[a-f0-9]{64}$/),
      });
      expect(booking.lines).toHaveLength(1);
      for (const line of booking.lines) {
        expect(line).toEqual(
          expect.objectContaining({
            id: expect.stringMatching(UUID),
            channelCampaignId: expect.stringMatching(/^.+$/),
            adapterKey: expect.stringMatching(/^(manual|computer-use)$/),
            channel: 'ctv',
            budgetMinor: 10_000,
            executionMode: 'sandbox',
            version: expect.any(Number),
            status: expect.stringMatching(/^(queued|in-progress|confirmed)$/),
            executionMethod: line.adapterKey,
            providerReference: line.status === 'confirmed' ? 'IO-9' : null,
            evidence: line.status === 'confirmed' ? EVIDENCE : null,
            claimedBy: line.claimedBy === null ? null : expect.stringMatching(/^q-staff(-2)?$/),
            assignedToUserId: line.claimedBy === null ? null : expect.stringMatching(UUID),
            assignedAt: isoOrNull(line.assignedToUserId),
            startedAt: isoOrNull((line as Record<string, unknown>).startedAt),
            confirmedAt: isoOrNull((line as Record<string, unknown>).confirmedAt),
            providerAttemptId: line.status === 'queued' ? null : expect.stringMatching(/^att_/),
            creatives: [],
          }),
        );
      }
      expect(booking.events.length).toBeGreaterThanOrEqual(2);
      for (const event of booking.events) {
        expect(event).toEqual(
          expect.objectContaining({
            id: expect.stringMatching(/^.+$/),
            bookingId: booking.id,
            lineId: event.action.startsWith('line.') ? booking.lines[0]!.id : null,
            action: expect.stringMatching(/^.+$/),
            actorId: expect.stringMatching(/^.+$/),
            actor: 'human',
            source: 'dev',
            createdAt: iso,
          }),
        );
      }
    }
    const confirmed = bookings.find((x) => x.id === b.confirmed!.id)!;
    expect(confirmed.lines[0]).toMatchObject({ startedAt: iso, confirmedAt: iso, assignedAt: iso });
  });
});

describe('page size', () => {
  beforeAll(async () => {
    for (let i = 0; i < 51; i++) await launch('org-bulk');
  }, 120_000);

  test('the default page holds 50 bookings; limit=100 returns all 51 without a cursor', async () => {
    const first = await page(t['q-bulk']!);
    expect(first.bookings).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = await page(t['q-bulk']!, `cursor=${first.nextCursor}`);
    expect(rest.bookings).toHaveLength(1);
    expect(rest.nextCursor).toBeNull();
    const big = await page(t['q-bulk']!, 'limit=100');
    expect(big.bookings).toHaveLength(51);
    expect(big.nextCursor).toBeNull();
    expect(big.bookings.map((x) => x.id)).toEqual([...first.bookings, ...rest.bookings].map((x) => x.id));
  });

  test.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=1.5'],
    ['limit=ten'],
    ['limit='],
    ['limit=-1'],
    ['status=open'],
    ['status='],
    ['assignee=someone'],
    ['assignee=ME'],
    ['overdue=yes'],
    ['overdue=1'],
    ['advertiserId='],
    ['adapterKey='],
    ['cursor='],
    ['page=2'],
    ['limit=5&sort=desc'],
  ])('%s is refused with 400 validation_failed', async (query) => {
    const res = await list(t['q-bulk']!, query);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await json(res)).toMatchObject({ status: 400, code: 'validation_failed', recovery: 'correctable' });
  });
});

describe('cursor paging', () => {
  const bookings: BookingBody[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 7; i++) bookings.push(await launch('org-p'));
  });
  const pager = () => t['q-pager']!;

  test('pages of 2 return every booking exactly once, oldest first, even while lines change and bookings arrive', async () => {
    const whole = (await page(pager(), 'limit=100')).bookings;
    expect(whole.map((x) => x.id)).toEqual(bookings.map((x) => x.id));
    const submitted = whole.map((x) => x.submittedAt);
    expect([...submitted].sort()).toEqual(submitted);

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    let late: BookingBody | undefined;
    do {
      const p: Page = await page(pager(), `limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...p.bookings.map((x) => x.id));
      sizes.push(p.bookings.length);
      if (sizes.length === 1) {
        await lineOp(pager(), bookings[0]!.id, 'claim', {}); // already seen
        await lineOp(pager(), bookings[1]!.id, 'claim', {});
        await lineOp(pager(), bookings[1]!.id, 'start', {});
        await lineOp(pager(), bookings[1]!.id, 'uncertain', { evidence: EVIDENCE });
        await lineOp(pager(), bookings[3]!.id, 'claim', {}); // not yet seen
        await lineOp(pager(), bookings[5]!.id, 'claim', {});
        await lineOp(pager(), bookings[5]!.id, 'start', {});
        await lineOp(pager(), bookings[5]!.id, 'uncertain', { evidence: EVIDENCE });
      }
      if (sizes.length === 2) {
        await lineOp(pager(), bookings[6]!.id, 'claim', {});
        await lineOp(pager(), bookings[6]!.id, 'start', {});
        late = await launch('org-p');
      }
      cursor = p.nextCursor;
      if (cursor !== null) expect(p.bookings).toHaveLength(2);
    } while (cursor !== null && sizes.length < 20);

    expect(sizes).toEqual([2, 2, 2, 2]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...bookings, late!].map((x) => x.id));
    expect((await page(pager(), 'limit=100')).bookings.map((x) => x.id)).toEqual(seen);
  });

  test('the last page has nextCursor null', async () => {
    const all = await page(pager(), 'limit=100');
    expect(all.nextCursor).toBeNull();
    const exact = await page(pager(), `limit=${all.bookings.length}`);
    expect(exact.nextCursor).toBeNull();
    const short = await page(pager(), `limit=${all.bookings.length - 1}`);
    expect(short.nextCursor).toEqual(expect.any(String));
    const last = await page(pager(), `limit=${all.bookings.length - 1}&cursor=${encodeURIComponent(short.nextCursor!)}`);
    expect(last.bookings.map((x) => x.id)).toEqual([all.bookings.at(-1)!.id]);
    expect(last.nextCursor).toBeNull();
  });

  test.each([
    ['garbage', 'not-a-cursor'],
    ['valid base64 JSON of the wrong shape', Buffer.from(JSON.stringify({ s: 'x', i: 'y' })).toString('base64url')],
    [
      'base64 JSON naming a non-uuid row',
      Buffer.from(JSON.stringify({ s: new Date().toISOString(), i: 'x', f: 'y' })).toString('base64url'),
    ],
  ])('when the cursor is %s, the list is refused with 400 invalid_cursor', async (_name, cursor) => {
    const res = await list(pager(), `cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ status: 400, code: 'invalid_cursor' });
  });

  test.each([['assignee=me'], ['status=all'], ['advertiserId=org-p'], ['adapterKey=manual'], ['overdue=false']])(
    'a cursor issued for the default filters is refused with 400 when reused with %s',
    async (filter) => {
      const first = await page(pager(), 'limit=2');
      expect(first.nextCursor).toEqual(expect.any(String));
      const res = await list(pager(), `limit=2&${filter}&cursor=${encodeURIComponent(first.nextCursor!)}`);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ status: 400, code: 'invalid_cursor' });
    },
  );
});

describe('what needs a person now, across every page', () => {
  test('lists assigned bookings with a line to reconcile or overdue, most overdue first, and nothing of other clients', async () => {
    await grantStaff(env.staff, 'q-attention');
    await assignClient(env.staff, 'q-attention', 'org-att');
    const staff = (await findActiveStaff(env.db, 'q-attention'))!;
    const calm = await launch('org-att');
    const toReconcile = await launch('org-att');
    const overdue = await launch('org-att');
    const foreign = await launch('org-att-other');
    await env.db('booking_lines').whereIn('booking_id', [toReconcile.id, foreign.id]).update({ status: 'reconciliation-required' });
    await env.db('bookings').where({ id: overdue.id }).update({ confirmation_due_at: hourAgo() });
    const listed = await listNeedingAttention(env.db, staff);
    expect(listed.map((b) => b.id)).toEqual([overdue.id, toReconcile.id]);
    expect(listed.map((b) => b.id)).not.toContain(calm.id);
    // Nothing for someone who serves no client.
    await grantStaff(env.staff, 'q-attention-none');
    expect(await listNeedingAttention(env.db, (await findActiveStaff(env.db, 'q-attention-none'))!)).toEqual([]);
  });
});
