import { createHash } from 'node:crypto';
import { createTestEnv, type TestEnv } from '../support/api';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { startConsoleService, type ConsoleBrowser, type ConsoleService } from './support';

/** What the console keeps of a form and for how long, what it does with a body no form sends, and the time zone it keeps. */
let env: TestEnv;
let service: ConsoleService;
let staff: ConsoleBrowser;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  await grantStaff(env.staff, 'staff-f');
  await assignClient(env.staff, 'staff-f', 'org-f');
  staff = await service.signIn({ user: 'staff-f', workspace: 'staff-org' });
});
afterAll(() => env.close());

const session = async () => {
  const key = `${env.prefix}:console:session:${createHash('sha256').update(staff.cookie('fd_console')!).digest('hex')}`;
  return JSON.parse((await env.redis.get(key))!) as { draft?: { action: string; fields: Record<string, string>; invalid: string[] } };
};

test('a refused form is kept for the next page only, without the CSRF token, and shown there once', async () => {
  const booking = await service.launch('org-f', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
  const line = booking.lines[0]!;
  const action = `/console/fulfilment/bookings/${booking.id}/lines/${line.id}/uncertain`;
  await staff.page(`/console/fulfilment/bookings/${booking.id}`);
  // A queued line cannot be marked uncertain: refused, with what was typed kept.
  const typed = 'The supplier’s desk has not answered & the portal shows <nothing>.';
  const res = await staff.form(action, { expectedVersion: String(line.version), evidence: typed });
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(`/console/fulfilment/bookings/${booking.id}#line-${line.id}`);
  expect((await session()).draft).toEqual({ action, fields: { expectedVersion: String(line.version), evidence: typed }, invalid: [] });

  const shown = await staff.page(`/console/fulfilment/bookings/${booking.id}`);
  expect(shown.html).toContain(
    'Line 1 · ctv · manual: Only a line whose operation is with its supplier can be marked uncertain; this one is queued. Nothing was changed.',
  );
  // This line offers no uncertain form (it is queued), so the kept text has nowhere to go but stays escaped if it had.
  expect(shown.html).not.toContain('<nothing>');
  expect((await session()).draft).toBeUndefined();
  const next = await staff.page(`/console/fulfilment/bookings/${booking.id}`);
  expect(next.html).not.toContain('role="alert"');
});

test('a form with more fields than any form has is a 413, not a 500, and changes nothing', async () => {
  const booking = await service.launch('org-f', [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_100 }]);
  const line = booking.lines[0]!;
  await staff.page(`/console/fulfilment/bookings/${booking.id}`);
  const fields = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, 'v']));
  const res = await staff.form(`/console/fulfilment/bookings/${booking.id}/lines/${line.id}/claim`, {
    ...fields,
    expectedVersion: String(line.version),
  });
  expect(res.status).toBe(413);
  expect(await res.json()).toMatchObject({ status: 413, code: 'too_many_parameters' });
  expect(await env.db('booking_lines').where({ id: line.id }).first()).toMatchObject({ version: line.version, claimed_by: null });
});

test('times are shown in the zone chosen from the list; a zone not in it, or a cookie naming none, leaves times in UTC', async () => {
  const preferences = async () => (await staff.page('/console/preferences')).html;
  expect(await preferences()).toContain('<strong data-time-zone>UTC</strong>');
  const refused = await staff.form('/console/preferences', { timeZone: 'Mars/Olympus_Mons' });
  expect(refused.status).toBe(303);
  expect(refused.headers.getSetCookie().some((c) => c.startsWith('fd_console_tz='))).toBe(false);
  expect(await preferences()).toContain('Time zone: choose one from the list. Nothing was changed.');

  const chosen = await staff.form('/console/preferences', { timeZone: 'Asia/Tokyo' });
  expect(chosen.headers.getSetCookie().find((c) => c.startsWith('fd_console_tz='))).toMatch(
    /^fd_console_tz=Asia%2FTokyo; Path=\/console; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/,
  );
  expect(await preferences()).toContain('<strong data-time-zone>Asia/Tokyo</strong>');

  for (const forged of ['%3Cscript%3E', 'Europe%2FNowhere', '%E0%A4%A', 'UTC%00']) {
    staff.setCookie('fd_console_tz', forged);
    const html = await preferences();
    expect(html).toContain('<strong data-time-zone>UTC</strong>');
    expect(html).not.toContain('<script');
  }
});
