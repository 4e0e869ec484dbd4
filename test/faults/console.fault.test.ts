import fc from 'fast-check';
import { createTestEnv, type TestEnv } from '../support/api';
import { grantOps } from '../../shared/staff/ops-store';
import { grantStaff } from '../../shared/staff/staff-store';
import { assignClient } from '../../shared/staff/staff-store';
import { startConsoleService, type ConsoleService } from '../console/support';
import { RawClient, inPool, type RawResponse } from './support/input-http';
import { figure } from './support/input-report';
import { differences, fingerprint } from './support/input-state';

/**
 * Hostile requests at the people's surfaces: the queue dashboard (bull-board, whose
 * maintenance queue is writable) with every kind of cookie but a live session's; and the
 * console's forms, signed in, with what no form sends (stale versions, malformed numbers,
 * repeated and unknown fields, markup and control characters, oversized bodies, other
 * tenants' ids, no or the wrong CSRF token). Nothing may get through, nothing may change,
 * nothing may fail with a 5xx, and what was typed comes back only escaped.
 */
const SEED = Number(process.env.FAULT_SEED ?? 20261124);
const RANDOM_COOKIES = 400;
const RANDOM_FORMS = 240;

let env: TestEnv;
let service: ConsoleService;
let client: RawClient;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  client = new RawClient(service.base, 8);
  for (const user of ['ops-1', 'ops-2']) {
    await grantStaff(env.staff, user);
    await grantOps(env.db, user);
  }
  await grantStaff(env.staff, 'staff-1');
}, 120_000);
afterAll(async () => {
  client?.close();
  await env.close();
});

/** Every way bull-board reads or changes a queue, the writable maintenance queue first. */
const DASHBOARD_REQUESTS: Array<{ method: string; path: string; body?: string }> = [
  { method: 'GET', path: '/admin/queues' },
  { method: 'GET', path: '/admin/queues/api/queues' },
  { method: 'GET', path: '/admin/queues/queue/maintenance' },
  ...['pause', 'resume', 'empty', 'retry/failed', 'clean/completed', 'clean/failed', 'promote'].map((action) => ({
    method: 'PUT',
    path: `/admin/queues/api/queues/maintenance/${action}`,
  })),
  { method: 'POST', path: '/admin/queues/api/queues/maintenance/add', body: '{"name":"purge-idempotency","data":{}}' },
];

const unknownRouteOf = (r: RawResponse) => {
  const body = JSON.parse(r.body) as Record<string, unknown>;
  return { status: r.status, body: { ...body, requestId: null } };
};

describe('the queue dashboard', () => {
  test('no cookie but a live session opens it: random ids, tokens, ended sessions, garbage; nothing changes', async () => {
    // Real material to misuse: a live token of an ops member, and the id of a session that ended with its console session.
    const token = await service.token({ org: 'staff-org', user: 'ops-1' });
    const ended = await service.signIn({ user: 'ops-2', workspace: 'staff-org' });
    await ended.page('/console/queues');
    expect((await ended.form('/console/queues/dashboard', {})).status).toBe(303);
    const endedId = ended.cookie('fd_dashboard')!;
    expect((await ended.form('/console/logout', {})).status).toBe(303);
    // A staff member without ops never gets a session to begin with.
    const staff = await service.signIn({ user: 'staff-1', workspace: 'staff-org' });
    await staff.page('/console/queues');
    const refused = await staff.form('/console/queues/dashboard', {});
    expect(refused.status).toBe(404);
    expect(staff.cookie('fd_dashboard')).toBeUndefined();

    const unknown = unknownRouteOf(await client.send({ method: 'GET', path: '/admin/nothing-here' }));
    const chosen = [
      endedId,
      token,
      encodeURIComponent(token),
      `${endedId}; fd_dashboard=${endedId}`,
      endedId.toUpperCase(),
      `${endedId}x`,
      'A'.repeat(43),
      '',
      '%00',
      'a'.repeat(8000),
    ];
    const drawn = fc.sample(
      fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        fc.string({ unit: 'binary', maxLength: 200 }).map((s) => encodeURIComponent(s)),
        fc.string({ maxLength: 100 }).filter((s) => !/[;\r\n]/.test(s) && /^[\x20-\x7e]*$/.test(s)),
      ),
      { seed: SEED, numRuns: RANDOM_COOKIES },
    );
    // Whole cookie headers: each value as the dashboard's cookie, and the token in the cookie the dashboard once kept it in.
    const cookies = [...[...chosen, ...drawn].map((v) => `fd_dashboard=${v}`), `flightdeck_admin_token=${encodeURIComponent(token)}`];
    const before = await fingerprint(env.db, env.redis, env.prefix);
    const cases = cookies.flatMap((cookie) => DASHBOARD_REQUESTS.map((r) => ({ ...r, cookie })));
    const answers = await inPool(cases, 8, (c) =>
      client.send({
        method: c.method,
        path: c.path,
        headers: { cookie: c.cookie, ...(c.body ? { 'content-type': 'application/json' } : {}) },
        ...(c.body ? { body: c.body } : {}),
      }),
    );
    const wrong = answers.flatMap((a, i) => {
      if (a.status === 404 && a.status === unknown.status) {
        const same = JSON.stringify(unknownRouteOf(a)) === JSON.stringify(unknown);
        return same ? [] : [`${cases[i]!.method} ${cases[i]!.path}: a 404 unlike the unknown route's`];
      }
      // A header too large for the server is refused before any route runs: no way in either.
      if (a.status === 431 || a.status === 400) return [];
      return [`${cases[i]!.method} ${cases[i]!.path} with ${cases[i]!.cookie.slice(0, 60)}: ${a.status} ${a.error ?? ''}`];
    });
    const changed = differences(before, await fingerprint(env.db, env.redis, env.prefix));
    figure(
      `console: ${cases.length} dashboard requests with ${cookies.length} cookies (seed ${SEED}): ${wrong.length} let in or not the unknown route's 404, ${answers.filter((a) => a.status >= 500 || a.status === 0).length} 5xx or dropped, ${changed.length} state changes`,
    );
    expect(wrong).toEqual([]);
    expect(changed).toEqual([]);
  });
});

/** What a person's own session may change by sending forms: its flash message and the draft it keeps. */
const notTheSession = (lines: string[]) => lines.filter((l) => !l.includes(':console:session:'));

describe('the console’s forms', () => {
  test('hostile forms from a signed-in staff member change nothing, never fail, and what they typed comes back escaped', async () => {
    await assignClient(env.staff, 'staff-1', 'org-f');
    const manual = await service.launch('org-f', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
    const foreign = await service.launch('org-g', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
    const staff = await service.signIn({ user: 'staff-1', workspace: 'staff-org' });
    const line = manual.lines[0]!;
    const base = `/console/fulfilment/bookings/${manual.id}/lines/${line.id}`;
    // The line claimed and started at the console, so every staff form is on its page.
    await staff.page(`/console/fulfilment/bookings/${manual.id}`);
    expect((await staff.form(`${base}/claim`, { expectedVersion: String(line.version) })).status).toBe(303);
    expect((await staff.form(`${base}/start`, { expectedVersion: String(line.version + 1) })).status).toBe(303);
    const version = line.version + 2;
    await staff.page(`/console/fulfilment/bookings/${manual.id}`);

    const typed = fc.sample(
      fc.oneof(
        fc.constantFrom(
          '<script>alert(1)</script> evidence enough',
          '"><img src=x onerror=alert(1)> evidence enough',
          "' onmouseover='alert(1)' evidence enough",
          '</textarea><script>alert(1)</script>',
          '&lt;already escaped&gt; &amp; more words',
          'evidence with a NUL \u0000 inside it',
        ),
        fc.string({ unit: 'grapheme', minLength: 10, maxLength: 300 }),
        fc.string({ unit: 'binary', minLength: 10, maxLength: 300 }),
      ),
      { seed: SEED, numRuns: RANDOM_FORMS },
    );
    const ops = ['confirm', 'reject', 'uncertain', 'resolve'];
    // Every form is refused for a reason of its own: a stale version, a number that is none, a field no form has.
    const versions = [String(version + 7), '1e3', '-1', '', ' 2', '99999999999999999999', `${version}.0`];
    // A second session of the same person, for its CSRF token (signing in changes state, so before the fingerprint).
    const other = await service.signIn({ user: 'staff-1', workspace: 'staff-org' });
    await other.page('/console/fulfilment');
    const before = await fingerprint(env.db, env.redis, env.prefix);
    const wrong: string[] = [];
    let refusedShownEscaped = 0;
    for (const [i, text] of typed.entries()) {
      const op = ops[i % ops.length]!;
      const fields: Record<string, string> = {
        expectedVersion: versions[i % versions.length]!,
        evidence: text,
        providerReference: text.slice(0, 150),
        outcome: i % 2 ? 'applied' : 'not-applied',
        confirmed: 'yes',
        ...(i % 5 === 0 ? { bookingId: foreign.id, lineId: foreign.lines[0]!.id } : {}),
      };
      const res = await staff.form(`${base}/${op}`, fields);
      if (res.status !== 303) wrong.push(`${op} #${i}: ${res.status}`);
      const shown = await staff.page(`/console/fulfilment/bookings/${manual.id}`);
      if (shown.status !== 200) wrong.push(`${op} #${i}: page ${shown.status}`);
      // No script anywhere, and no event handler in any tag once attribute values (escaped text) are set aside.
      const tags = shown.html.replace(/="[^"]*"/g, '=""');
      if (/<script|<[a-z][^>]*\son[a-z]+\s*=/i.test(tags)) wrong.push(`${op} #${i}: markup from the form reached the page`);
      if (/[<>"'&]/.test(text) && shown.html.includes(text)) wrong.push(`${op} #${i}: typed text shown unescaped`);
      if (shown.html.includes('role="alert"')) refusedShownEscaped++;
    }

    // Forms no page sends: another tenant's booking, no token, another session's token, oversized, too many fields.
    const foreignBase = `/console/fulfilment/bookings/${foreign.id}/lines/${foreign.lines[0]!.id}`;
    const odd: Array<[string, Promise<Response>]> = [
      ['another tenant’s line', staff.form(`${foreignBase}/claim`, { expectedVersion: String(foreign.lines[0]!.version) })],
      [
        'no CSRF token',
        staff.form(`${base}/reject`, { _csrf: '', expectedVersion: String(version), evidence: 'x'.repeat(20), confirmed: 'yes' }),
      ],
      [
        'another session’s token',
        staff.form(`${base}/reject`, { _csrf: other.csrf, expectedVersion: String(version), evidence: 'x'.repeat(20), confirmed: 'yes' }),
      ],
      ['a body over 64 kB', staff.form(`${base}/uncertain`, { expectedVersion: String(version), evidence: 'y'.repeat(70_000) })],
      ['more than 50 fields', staff.form(`${base}/uncertain`, Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`f${k}`, 'v'])))],
      ['an unknown operation', staff.form(`${base}/delete`, { expectedVersion: String(version) })],
      [
        'a line id that is no uuid',
        staff.form(`/console/fulfilment/bookings/${manual.id}/lines/..%2F..%2Fqueues/claim`, { expectedVersion: '0' }),
      ],
    ];
    for (const [what, pending] of odd) {
      const res = await pending;
      if (res.status >= 500 || res.status === 303 || res.status === 200) wrong.push(`${what}: ${res.status}`);
    }

    const changed = notTheSession(differences(before, await fingerprint(env.db, env.redis, env.prefix)));
    const row = await env.db('booking_lines').where({ id: line.id }).first();
    figure(
      `console: ${typed.length} hostile line forms (seed ${SEED}) and ${odd.length} forms no page sends: ${wrong.length} not refused as expected or rendered unsafely, ${refusedShownEscaped} refusals shown with the typed text escaped, ${changed.length} state changes`,
    );
    expect(wrong).toEqual([]);
    expect(changed).toEqual([]);
    expect(row).toMatchObject({ status: 'in-progress', version, claimed_by: 'staff-1' });
  });
});
