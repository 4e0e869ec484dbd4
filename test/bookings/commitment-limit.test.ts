import { randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { launchPlan, waitForBooking } from '../support/bookings';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  await env.workers({ WORKER_QUEUES: 'suppliers,housekeeping' });
});
afterAll(() => env.close());

const amend = (token: string, campaignId: string, body: unknown) =>
  api.fetch(`/api/v1/campaigns/${campaignId}/amendments`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });

const state = async (bookingId: string) => ({
  amendments: await env.db('booking_amendments').where({ booking_id: bookingId }).select('id'),
  operations: await env.db('line_operations').where({ booking_id: bookingId }).select('id'),
  lines: await env
    .db('booking_lines')
    .where({ booking_id: bookingId })
    .orderBy('id')
    .select('id', 'budget_minor', 'version', 'operation_id'),
  booking: await env.db('bookings').where({ id: bookingId }).first('version', 'status'),
  outbox: Number((await env.db('outbox').whereRaw("payload->>'bookingId' = ?", [bookingId]).count('* as n'))[0]!.n),
});

describe("no amendment takes the lines past the campaign's maximum commitment", () => {
  test('£3,000 budget and maximum commitment: raising a line to reach £3,300 is 409 naming the limit and changes nothing; moving money between lines is accepted', async () => {
    const launched = await launchPlan(
      env,
      api,
      [
        { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 150_000 },
        { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 150_000 },
      ],
      'org-limit',
      { budgetMinor: 300_000, maximumCommitmentMinor: 300_000 },
    );
    const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    const [ctv, audio] = booking.lines;
    const before = await state(booking.id);

    const over = await amend(launched.token, launched.campaignId, {
      expectedVersion: booking.version,
      lines: [{ lineId: ctv!.id, budgetMinor: 180_000 }],
    });
    expect(over.status).toBe(409);
    const problem = await json(over);
    expect(problem).toMatchObject({ code: 'commitment_limit_exceeded', recovery: 'correctable' });
    expect(String(problem.detail)).toContain('maximumCommitmentMinor');
    expect(String(problem.detail)).toContain('330000');
    expect(String(problem.detail)).toContain('300000');
    expect(await state(booking.id)).toEqual(before);

    // Both lines up together, each within the limit on its own: still over, still nothing.
    const both = await amend(launched.token, launched.campaignId, {
      expectedVersion: booking.version,
      lines: [
        { lineId: ctv!.id, budgetMinor: 151_000 },
        { lineId: audio!.id, budgetMinor: 150_500 },
      ],
    });
    expect((await json(both)).code).toBe('commitment_limit_exceeded');
    expect(await state(booking.id)).toEqual(before);

    const moved = await amend(launched.token, launched.campaignId, {
      expectedVersion: booking.version,
      lines: [
        { lineId: ctv!.id, budgetMinor: 180_000 },
        { lineId: audio!.id, budgetMinor: 120_000 },
      ],
    });
    expect(moved.status).toBe(202);
    // No delivery has been fetched yet: the answer says the spend it judged against may be behind.
    expect((await json(moved)).spendFigures).toMatchObject({
      stale: true,
      asOf: null,
      warning: expect.stringContaining('may have spent more'),
    });
  });
});
