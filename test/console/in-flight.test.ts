import { createTestEnv, type TestEnv } from '../support/api';
import { approve, bookingFootprint, draftCampaign, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { makeCreative } from '../support/creatives';
import { fundWallet } from '../support/wallet';
import { post as postEntry } from '../../shared/wallet/ledger';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { startConsoleService, type ConsoleBrowser, type ConsoleService } from './support';

/**
 * An advertiser controls a running campaign at the console: pause, resume and stop (stop asked
 * to be confirmed first, it is final), budget amendments; refusals said over the page with
 * nothing changed; and staff work the line operations a workflow supplier hands them.
 */
let env: TestEnv;
let service: ConsoleService;
let staff: ConsoleBrowser;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  await env.workers({ WORKER_QUEUES: 'suppliers,housekeeping' });
  await grantStaff(env.staff, 'staff-if');
  for (const org of ['org-if', 'org-live', 'org-poor']) await assignClient(env.staff, 'staff-if', org);
  staff = await service.signIn({ user: 'staff-if', workspace: 'staff-org' });
});
afterAll(() => env.close());

const unescape = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

/** The form with this action on the page, and the fields it sends as rendered (hidden inputs and values). */
function formOf(html: string, action: string): Record<string, string> | null {
  const escaped = action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`<form method="post" action="${escaped}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!m) return null;
  const fields: Record<string, string> = {};
  for (const input of m[1]!.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input[1]!)?.[1];
    const value = /value="([^"]*)"/.exec(input[1]!)?.[1];
    if (name && name !== '_csrf') fields[name] = unescape(value ?? '');
  }
  return fields;
}

const flashOf = (html: string) => {
  const m = /<div id="flash" class="flash (ok|error)"[^>]*>([^<]*)<\/div>/.exec(html);
  return m ? { kind: m[1], text: unescape(m[2]!) } : null;
};

/** The line's section on the advertiser's page. */
const sectionOf = (html: string, lineId: string) => {
  const start = html.indexOf(`<section id="line-${lineId}"`);
  return start < 0 ? '' : html.slice(start, html.indexOf('</section>', start) + '</section>'.length);
};

const buyerToken = (org: string) => service.token({ org, user: `${org}-buyer` });

async function runningSandbox(org: string, budgets: number[]): Promise<BookingBody> {
  const channels = ['ctv', 'dooh', 'audio'];
  return service.launch(
    org,
    budgets.map((budgetMinor, i) => ({ channel: channels[i]!, adapterKey: `sandbox-${channels[i]}`, budgetMinor })),
    (b) => b.lines.every((l) => l.status === 'confirmed'),
    // Room above the budget: amendments may raise lines up to the maximum commitment.
    { endDate: '2099-03-31', maximumCommitmentMinor: 2 * budgets.reduce((x, y) => x + y, 0) },
  );
}

async function until(org: string, bookingId: string, done: (b: BookingBody) => boolean) {
  return waitForBooking(service.api, await buyerToken(org), bookingId, done);
}

type LineView = BookingBody['lines'][number] & { stop: { kind: string; note?: string } | null; pendingOperation: string | null };
const linesOf = (b: BookingBody) => b.lines as LineView[];

test('pausing and resuming the whole campaign and one line, each line saying whether it is paused and what is in hand', async () => {
  const booking = await runningSandbox('org-if', [10_000, 12_000]);
  const [a, b] = booking.lines as [LineView, LineView];
  const buyer = await service.signIn({ user: 'org-if-buyer', workspace: 'org-if' });
  const path = `/console/bookings/${booking.id}`;
  let html = (await buyer.page(path)).html;
  expect(formOf(html, `${path}/pause`)).toEqual({ note: '' });
  expect(formOf(html, `${path}/resume`)).toBeNull();
  expect(formOf(html, `${path}/lines/${a.id}/pause`)).toEqual({ expectedVersion: String(a.version), note: '' });
  expect(sectionOf(html, a.id)).toContain('data-stop-kind="running"');

  const res = await buyer.form(`${path}/pause`, { note: 'Brand-safety review' });
  expect([res.status, res.headers.get('location')]).toEqual([303, path]);
  html = (await buyer.page(path)).html;
  expect(flashOf(html)).toEqual({ kind: 'ok', text: 'The campaign is being paused: asked of 2 lines.' });
  // What the page shows straight after: the pause in hand on each line, before any supplier answered.
  const asked = await env.db('booking_lines').where({ booking_id: booking.id }).select('operation', 'status', 'stop');
  for (const l of asked)
    expect(l).toMatchObject({ operation: 'pause', stop: { kind: 'pause', note: 'Brand-safety review', by: 'org-if-buyer' } });
  // Recorded as done at the console.
  const event = await env.db('booking_events').where({ booking_id: booking.id, action: 'line.pause-requested' }).first();
  expect(event).toMatchObject({ actor_id: 'org-if-buyer', source: 'web' });

  const paused = await until('org-if', booking.id, (x) => x.lines.every((l) => l.status === 'stopped'));
  html = (await buyer.page(path)).html;
  for (const l of linesOf(paused)) {
    const section = sectionOf(html, l.id);
    expect(section).toContain('data-stop-kind="paused"');
    expect(section).toContain('<dd data-pending-operation>none</dd>');
    expect(formOf(section, `${path}/lines/${l.id}/resume`)).toEqual({ expectedVersion: String(l.version), note: '' });
    expect(formOf(section, `${path}/lines/${l.id}/pause`)).toBeNull();
  }
  expect(formOf(html, `${path}/resume`)).toEqual({ note: '' });

  // One line resumed on its own, at the version shown.
  const one = linesOf(paused).find((l) => l.id === b.id)!;
  const resumed = await buyer.form(`${path}/lines/${b.id}/resume`, { expectedVersion: String(one.version) });
  expect(resumed.headers.get('location')).toBe(`${path}#line-${b.id}`);
  html = (await buyer.page(path)).html;
  expect(flashOf(html)).toEqual({ kind: 'ok', text: 'Line 2 · dooh · sandbox-dooh: resume asked of its supplier.' });
  expect(sectionOf(html, b.id)).toMatch(
    // The booking and its operations are read one after the other: an operation that settles in
    // between leaves the line naming its change without the change's state.
    /<dd data-pending-operation>resume(: (requested|in-flight|applied))?<\/dd>|<dd data-pending-operation>none<\/dd>/,
  );
  const after = await until('org-if', booking.id, (x) => x.lines.find((l) => l.id === b.id)!.status === 'confirmed');
  expect(linesOf(after).find((l) => l.id === a.id)).toMatchObject({ status: 'stopped', stop: { kind: 'pause' } });
  expect(await env.db('sandbox_ledger').where({ line_id: b.id, operation: 'resume' })).toHaveLength(1);
  expect(await env.db('sandbox_ledger').where({ line_id: a.id, operation: 'resume' })).toHaveLength(0);
});

test('a stop asks to be confirmed first and changes nothing until it is; confirmed, the lines end and offer nothing more', async () => {
  const booking = await runningSandbox('org-if', [10_100]);
  const line = booking.lines[0]! as LineView;
  const buyer = await service.signIn({ user: 'org-if-buyer', workspace: 'org-if' });
  const path = `/console/bookings/${booking.id}`;
  await buyer.page(path);
  const before = await bookingFootprint(env.db, booking.id);

  // A line's stop: the confirmation page, the note as typed, nothing stopped yet.
  const asked = await buyer.form(`${path}/lines/${line.id}/stop`, {
    expectedVersion: String(line.version),
    note: 'Creative <withdrawn> & gone',
  });
  expect(asked.status).toBe(200);
  const confirm = await asked.text();
  expect(confirm).toContain('<h1>Stop Line 1 · ctv · sandbox-ctv?</h1>');
  expect(confirm).toContain('Stopping cannot be undone.');
  expect(confirm).toContain('<blockquote>Creative &lt;withdrawn&gt; &amp; gone</blockquote>');
  const second = formOf(confirm, `${path}/lines/${line.id}/stop`);
  expect(second).toEqual({ expectedVersion: String(line.version), note: 'Creative <withdrawn> & gone', confirmed: 'yes' });
  expect(await bookingFootprint(env.db, booking.id)).toEqual(before);

  // The whole campaign's stop asks too.
  const whole = await buyer.form(`${path}/stop`, {});
  expect(whole.status).toBe(200);
  const wholeHtml = await whole.text();
  expect(wholeHtml).toContain('every line that can still run');
  expect(formOf(wholeHtml, `${path}/stop`)).toEqual({ confirmed: 'yes' });
  expect(await bookingFootprint(env.db, booking.id)).toEqual(before);

  // Confirmed: the line ends.
  const done = await buyer.form(`${path}/lines/${line.id}/stop`, second!);
  expect(done.status).toBe(303);
  const ended = await until('org-if', booking.id, (b) => b.lines[0]!.status === 'stopped');
  expect(linesOf(ended)[0]).toMatchObject({ stop: { kind: 'end', note: 'Creative <withdrawn> & gone' } });
  const html = (await buyer.page(path)).html;
  const section = sectionOf(html, line.id);
  expect(section).toContain('data-stop-kind="ended"');
  expect(section).toContain('Nothing can be asked of this line now.');
  expect(html).toContain('Nothing can be asked of the whole campaign now.');
  expect(html).not.toContain(`action="${path}/amend"`);
});

test('a stale version, a move the line cannot take and a budget that is not an amount are shown over the page, with nothing changed and the form kept', async () => {
  const booking = await runningSandbox('org-if', [10_200, 10_300]);
  const [a] = booking.lines as [LineView, LineView];
  const buyer = await service.signIn({ user: 'org-if-buyer', workspace: 'org-if' });
  const path = `/console/bookings/${booking.id}`;
  await buyer.page(path);
  const before = await bookingFootprint(env.db, booking.id);

  const stale = await buyer.form(`${path}/lines/${a.id}/pause`, { expectedVersion: String(a.version - 1), note: 'Old page' });
  expect([stale.status, stale.headers.get('location')]).toEqual([303, `${path}#line-${a.id}`]);
  let html = (await buyer.page(path)).html;
  expect(flashOf(html)).toEqual({
    kind: 'error',
    text: 'Line 1 · ctv · sandbox-ctv changed since you loaded it. Nothing was changed: look at it again and decide.',
  });
  // The note typed is back in that form.
  expect(formOf(sectionOf(html, a.id), `${path}/lines/${a.id}/pause`)).toEqual({ expectedVersion: String(a.version), note: 'Old page' });
  expect(await bookingFootprint(env.db, booking.id)).toEqual(before);

  // A running line cannot be resumed: the domain's reason, the allowed moves named.
  await buyer.form(`${path}/lines/${a.id}/resume`, { expectedVersion: String(a.version) });
  html = (await buyer.page(path)).html;
  expect(flashOf(html)?.text).toBe(
    'Line 1 · ctv · sandbox-ctv: Only a paused or staged line can be resumed; this one is confirmed. Allowed now: pause, stop. Nothing was changed.',
  );

  // An amendment of a stale booking version, and a budget typed wrongly.
  const amend = formOf(html, `${path}/amend`)!;
  expect(amend).toMatchObject({ expectedVersion: String(booking.version), [`budget-${a.id}`]: '102.00' });
  await buyer.form(`${path}/amend`, { ...amend, expectedVersion: String(booking.version - 1), [`budget-${a.id}`]: '150.00' });
  html = (await buyer.page(path)).html;
  expect(flashOf(html)?.text).toBe('The amendment changed since you loaded it. Nothing was changed: look at it again and decide.');
  await buyer.form(`${path}/amend`, { ...amend, [`budget-${a.id}`]: '150,5' });
  html = (await buyer.page(path)).html;
  expect(flashOf(html)?.text).toBe(
    'The amendment: Line 1 · ctv · sandbox-ctv budget: an amount in pounds, like 1250.00. Nothing was changed.',
  );
  expect(html).toMatch(new RegExp(`id="budget-${a.id}" name="budget-${a.id}"[^>]*aria-invalid="true"[^>]*value="150,5"`));
  // Nothing changed in the form: the domain's own words for an amendment of nothing.
  await buyer.form(`${path}/amend`, amend);
  expect(flashOf((await buyer.page(path)).html)?.text).toBe(
    'The amendment: Change at least one line, or the end date. Nothing was changed.',
  );
  expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
});

test('an amendment changes one line’s budget through its supplier; the line and the history show where it stands', async () => {
  const booking = await runningSandbox('org-if', [10_400, 10_500]);
  const [a, b] = booking.lines as [LineView, LineView];
  const buyer = await service.signIn({ user: 'org-if-buyer', workspace: 'org-if' });
  const path = `/console/bookings/${booking.id}`;
  const html = (await buyer.page(path)).html;
  expect(html).toContain('Total budget now <strong data-total-budget>GBP 209.00</strong>');
  const amend = formOf(html, `${path}/amend`)!;
  const res = await buyer.form(`${path}/amend`, { ...amend, [`budget-${a.id}`]: '130.50', note: 'More reach' });
  expect(res.headers.get('location')).toBe(`${path}#amend-heading`);
  expect(flashOf((await buyer.page(path)).html)).toEqual({ kind: 'ok', text: 'Amendment asked of 1 line: it is in-flight.' });
  const ops = await env.db('line_operations').where({ booking_id: booking.id, kind: 'change-budget' });
  expect(ops.map((o) => [o.line_id, Number(o.budget_to_minor)])).toEqual([[a.id, 13_050]]);

  await until('org-if', booking.id, (x) => x.lines.find((l) => l.id === a.id)!.budgetMinor === 13_050);
  const after = (await buyer.page(path)).html;
  expect(sectionOf(after, a.id)).toContain('<dd data-line-budget>GBP 130.50</dd>');
  expect(sectionOf(after, a.id)).toContain('GBP 104.00 → GBP 130.50: <span data-amendment-status>applied</span> (amendment applied)');
  expect(sectionOf(after, b.id)).toContain('<dt>Last budget change</dt><dd>none</dd>');
  expect(after).toContain('Total budget now <strong data-total-budget>GBP 235.50</strong>');
  const history = after.slice(after.indexOf('id="amendments-heading"'));
  expect(history).toContain('org-if-buyer');
  expect(history).toContain('More reach');
  expect(history).toMatch(/Line 1 · ctv · sandbox-ctv: GBP 104.00 → GBP 130.50/);
});

test('a cut judged against spend figures that are behind is not made until the person confirms it', async () => {
  const booking = await runningSandbox('org-if', [10_700, 10_800]);
  const [a] = booking.lines as [LineView];
  const buyer = await service.signIn({ user: 'org-if-buyer', workspace: 'org-if' });
  const path = `/console/bookings/${booking.id}`;
  // The form's fields, the confirmation unticked.
  const { confirmStale: _unticked, ...amend } = formOf((await buyer.page(path)).html, `${path}/amend`)!;
  const before = await bookingFootprint(env.db, booking.id);
  // No delivery has been fetched for the new lines yet: the figures are behind.
  await buyer.form(`${path}/amend`, { ...amend, [`budget-${a.id}`]: '50.00' });
  const html = (await buyer.page(path)).html;
  expect(flashOf(html)).toMatchObject({ kind: 'error' });
  expect(flashOf(html)!.text).toContain('may have spent more');
  expect(flashOf(html)!.text).toContain('Cut even if the spend figures are behind');
  expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
  await buyer.form(`${path}/amend`, { ...formOf(html, `${path}/amend`)!, [`budget-${a.id}`]: '50.00', confirmStale: 'yes' });
  expect(flashOf((await buyer.page(path)).html)).toEqual({ kind: 'ok', text: 'Amendment asked of 1 line: it is in-flight.' });
  const ops = await env.db('line_operations').where({ booking_id: booking.id, kind: 'change-budget' });
  expect(ops.map((o) => [o.line_id, Number(o.budget_to_minor)])).toEqual([[a.id, 5_000]]);
});

test('no one outside the campaign’s workspace or product can see or control it; a form without the session’s token changes nothing', async () => {
  const booking = await runningSandbox('org-if', [10_600]);
  const line = booking.lines[0]!;
  const path = `/console/bookings/${booking.id}`;
  const before = await bookingFootprint(env.db, booking.id);
  const outsider = await service.signIn({ user: 'someone', workspace: 'org-elsewhere' });
  // DOOH-only, in the same workspace: a CTV campaign is not theirs, as the API would say.
  const narrow = await service.signIn({ user: 'dooh-buyer', workspace: 'org-if', product: 'flightdeck-dooh' });
  for (const person of [outsider, narrow]) {
    expect((await person.page(path)).status).toBe(404);
    for (const [action, fields] of [
      [`${path}/pause`, {}],
      [`${path}/stop`, { confirmed: 'yes' }],
      [`${path}/lines/${line.id}/pause`, { expectedVersion: String(line.version) }],
      [`${path}/amend`, { expectedVersion: String(booking.version), [`budget-${line.id}`]: '500.00' }],
    ] as const) {
      const res = await person.form(action, fields);
      expect([action, res.status]).toEqual([action, 404]);
      expect(await res.text()).toContain('There is nothing here for you');
    }
  }
  const buyer = await service.signIn({ user: 'org-if-buyer', workspace: 'org-if' });
  await buyer.page(path);
  const forged = await buyer.form(`${path}/pause`, { _csrf: 'not-the-token' });
  expect(forged.status).toBe(403);
  expect(await bookingFootprint(env.db, booking.id)).toEqual(before);
});

/** A live booking of one manual (workflow) line, booked by staff through the API: its budget is captured from the wallet. */
async function liveManual(org: string, budgetMinor: number, funds: number, maximumCommitmentMinor = budgetMinor) {
  await fundWallet(env, org, funds);
  const token = await buyerToken(org);
  const creative = await makeCreative(service.api, token, 'ctv');
  const { campaignId, planVersion } = await draftCampaign(
    service.api,
    token,
    [{ channel: 'ctv', adapterKey: 'manual', budgetMinor, creativeIds: [creative.id] }],
    { executionMode: 'live', maximumCommitmentMinor },
  );
  await approve(service.api, token, campaignId, planVersion);
  const launched = (await (await post(service.api, token, `/api/v1/campaigns/${campaignId}/launch`)).json()) as { booking: BookingBody };
  const bookingId = launched.booking.id;
  const lineId = launched.booking.lines[0]!.id;
  const staffToken = await service.token({ org: 'staff-org', user: 'staff-if' });
  const base = `/api/v1/internal/fulfilment/bookings/${bookingId}/lines/${lineId}`;
  await waitForBooking(service.api, token, bookingId, (b) => (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null);
  for (const [op, body] of [
    ['claim', {}],
    ['start', {}],
    ['confirm', { providerReference: 'IO-1', evidence: 'Signed insertion order.' }],
  ] as const) {
    const version = (await readBooking(service.api, token, bookingId)).lines[0]!.version;
    const res = await post(service.api, staffToken, `${base}/${op}`, { expectedVersion: version, ...body });
    expect([op, res.status]).toEqual([op, 200]);
  }
  return { bookingId, lineId };
}

test('an increase the wallet cannot cover is said as such, and nothing is held or asked', async () => {
  const { bookingId, lineId } = await liveManual('org-poor', 10_000, 25_000, 25_000);
  // Money held elsewhere since the launch: 2,000 is left beside the line's budget, under the 25,000 limit.
  await env.db.transaction((trx) =>
    postEntry(trx, {
      advertiserId: 'org-poor',
      kind: 'reservation',
      amountMinor: 13_000,
      subjectType: 'wallet',
      subjectId: 'held-elsewhere',
      actorId: 'test-setup',
    }),
  );
  const buyer = await service.signIn({ user: 'org-poor-buyer', workspace: 'org-poor' });
  const path = `/console/bookings/${bookingId}`;
  const amend = formOf((await buyer.page(path)).html, `${path}/amend`)!;
  const before = await bookingFootprint(env.db, bookingId);
  const wallet = await env.db('wallets').where({ advertiser_id: 'org-poor' }).first();
  await buyer.form(`${path}/amend`, { ...amend, [`budget-${lineId}`]: '200.00' });
  const html = (await buyer.page(path)).html;
  expect(flashOf(html)).toMatchObject({ kind: 'error' });
  expect(flashOf(html)!.text).toMatch(/^The amendment: .*Nothing was changed\.$/);
  expect(flashOf(html)!.text.toLowerCase()).toContain('wallet');
  expect(formOf(html, `${path}/amend`)).toMatchObject({ [`budget-${lineId}`]: '200.00' });
  expect(await bookingFootprint(env.db, bookingId)).toEqual(before);
  expect(await env.db('wallets').where({ advertiser_id: 'org-poor' }).first()).toEqual(wallet);
});

test('a workflow line’s pause reaches the fulfilment queue named as a pause; staff start and confirm it at the console', async () => {
  const { bookingId, lineId } = await liveManual('org-live', 10_000, 30_000);
  const buyer = await service.signIn({ user: 'org-live-buyer', workspace: 'org-live' });
  const path = `/console/bookings/${bookingId}`;
  const version = formOf((await buyer.page(path)).html, `${path}/lines/${lineId}/pause`)!.expectedVersion!;
  await buyer.form(`${path}/lines/${lineId}/pause`, { expectedVersion: version });
  await until('org-live', bookingId, (b) => (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null);

  const queue = (await staff.page('/console/fulfilment')).html;
  const row = /<tr[^>]*>(?:(?!<\/tr>)[\s\S])*<\/tr>/g;
  const mine = [...queue.matchAll(row)].map((m) => m[0]).find((r) => r.includes(bookingId.slice(0, 8)))!;
  expect(mine).toContain('<span data-line-operation>pause</span> for staff');

  const staffPath = `/console/fulfilment/bookings/${bookingId}`;
  const linePath = `${staffPath}/lines/${lineId}`;
  // The member who booked the line still has it: the pause is theirs to start.
  const asked = (await staff.page(staffPath)).html;
  expect(asked).toContain('In hand: <strong data-line-operation>pause</strong> (requested)');
  expect(formOf(asked, `${linePath}/claim`)).toBeNull();
  expect(formOf(asked, `${linePath}/confirm`)).toBeNull();
  const started = await staff.form(`${linePath}/start`, formOf(asked, `${linePath}/start`)!);
  expect(started.status).toBe(303);
  expect(flashOf((await staff.page(staffPath)).html)?.kind).toBe('ok');
  const page = (await staff.page(staffPath)).html;
  // A change's confirmation needs no booking reference, and a refusal of it is not final: no rejection to confirm.
  const confirm = formOf(page, `${linePath}/confirm`)!;
  expect(page).toContain('<legend>The supplier applied the pause</legend>');
  const refused = formOf(page, `${linePath}/reject`)!;
  expect(page).toContain('<legend>The supplier refused the pause</legend>');
  expect(refused).toEqual({ expectedVersion: confirm.expectedVersion });
  await staff.form(`${linePath}/confirm`, { ...confirm, evidence: 'Supplier desk paused the order by email.' });
  expect(flashOf((await staff.page(staffPath)).html)).toEqual({ kind: 'ok', text: 'Line 1 · ctv · manual confirmed.' });
  const line = await env.db('booking_lines').where({ id: lineId }).first();
  expect(line).toMatchObject({ status: 'stopped', stop: { kind: 'pause' }, operation_id: null });
  expect(sectionOf((await buyer.page(path)).html, lineId)).toContain('data-stop-kind="paused"');
});

test('an unknown pause outcome is resolved by staff from evidence: not applied puts the line back running, without a rejection to confirm', async () => {
  const { bookingId, lineId } = await liveManual('org-live', 10_100, 30_000);
  const buyer = await service.signIn({ user: 'org-live-buyer', workspace: 'org-live' });
  const path = `/console/bookings/${bookingId}`;
  const version = formOf((await buyer.page(path)).html, `${path}/lines/${lineId}/pause`)!.expectedVersion!;
  await buyer.form(`${path}/lines/${lineId}/pause`, { expectedVersion: version });
  await until('org-live', bookingId, (b) => (b.lines[0] as { workflowSteps?: unknown }).workflowSteps != null);

  const staffPath = `/console/fulfilment/bookings/${bookingId}`;
  const linePath = `${staffPath}/lines/${lineId}`;
  await staff.form(`${linePath}/start`, formOf((await staff.page(staffPath)).html, `${linePath}/start`)!);
  // The advertiser's operator sees the pause with its supplier, and records that its outcome is unknown.
  const operator = await service.signIn({ user: 'org-live-ops', workspace: 'org-live', permissions: ['operator:reconcile'] });
  const opPath = `/console/operator/bookings/${bookingId}`;
  const opPage = (await operator.page(opPath)).html;
  expect(opPage).toContain('in hand: <strong data-line-operation>pause</strong> (in-flight)');
  const uncertain = formOf(opPage, `${opPath}/lines/${lineId}/uncertain`)!;
  await operator.form(`${opPath}/lines/${lineId}/uncertain`, {
    ...uncertain,
    evidence: 'The supplier desk did not answer the pause email.',
  });
  expect(flashOf((await operator.page(opPath)).html)).toEqual({ kind: 'ok', text: 'Line 1 · ctv · manual now needs reconciliation.' });
  const queue = (await staff.page('/console/fulfilment')).html;
  expect(queue).toContain('1 line to reconcile (pause)');

  const page = (await staff.page(staffPath)).html;
  expect(page).toContain('not applied: the line is back as it was before the pause');
  const resolve = formOf(page, `${linePath}/resolve`)!;
  const res = await staff.form(`${linePath}/resolve`, {
    ...resolve,
    outcome: 'not-applied',
    evidence: 'The supplier says the order kept running.',
  });
  // Not final: done at once, no confirmation page.
  expect(res.status).toBe(303);
  expect(flashOf((await staff.page(staffPath)).html)).toEqual({
    kind: 'ok',
    text: 'Line 1 · ctv · manual resolved as not applied: the pause did not happen.',
  });
  expect(await env.db('booking_lines').where({ id: lineId }).first()).toMatchObject({ status: 'confirmed', operation_id: null });
});
