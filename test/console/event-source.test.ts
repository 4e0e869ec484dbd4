import { SPENDER_PERMISSIONS } from '../support/issuer';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, readBooking, waitForBooking, type BookingBody } from '../support/bookings';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { requiredQueues } from '../../shared/queues/names';
import { startConsoleService, type ConsoleBrowser, type ConsoleService } from './support';

/**
 * A booking event's `source` is the surface the change came through, in the specification's
 * words: `web` the console, `dev` the REST API called directly, `mcp` the agent endpoint,
 * `system` the workers. It does not follow how tokens are issued: the console signs in at the
 * development issuer here, and a second API verifies tokens against a JWKS, as in production.
 */
const ORG = 'org-src';
let env: TestEnv;
let service: ConsoleService;
let jwksApi: TestApi;
let staff: ConsoleBrowser;

beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  jwksApi = await env.api();
  await env.workers({
    WORKER_QUEUES: requiredQueues()
      .filter((q) => !q.startsWith('supplier.manual'))
      .join(','),
    OUTBOX_RELAY_INTERVAL_MS: '50',
  });
  await grantStaff(env.staff, 'staff-src');
  await assignClient(env.staff, 'staff-src', ORG);
  staff = await service.signIn({ user: 'staff-src', workspace: 'staff-org' });
});
afterAll(() => env.close());

const lineEvents = (b: BookingBody, lineId: string) => b.events.filter((e) => e.lineId === lineId && e.action.startsWith('line.'));

async function consoleLineOp(bookingId: string, lineId: string, op: string, fields: Record<string, string>) {
  await staff.page(`/console/fulfilment/bookings/${bookingId}`);
  const res = await staff.form(`/console/fulfilment/bookings/${bookingId}/lines/${lineId}/${op}`, fields);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toMatch(new RegExp(`^/console/fulfilment/bookings/${bookingId}`));
}

test('console actions are web and direct REST calls are dev, under the development issuer and under a JWKS alike', async () => {
  const booking = await service.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_000 }]);
  const line = booking.lines[0]!;
  const restToken = await service.token({ org: 'staff-org', user: 'staff-src' });
  const base = `/api/v1/internal/fulfilment/bookings/${booking.id}/lines/${line.id}`;

  // Claimed at the console, started over REST at the development-issuer API, confirmed at the console.
  await consoleLineOp(booking.id, line.id, 'claim', { expectedVersion: String(line.version) });
  const started = await post(service.api, restToken, `${base}/start`, { expectedVersion: line.version + 1 });
  expect(started.status).toBe(200);
  await consoleLineOp(booking.id, line.id, 'confirm', {
    expectedVersion: String(line.version + 2),
    providerReference: 'IO-SRC-1',
    evidence: 'Signed insertion order received from the supplier desk.',
  });

  const after = await readBooking(service.api, await service.token({ org: ORG, user: `${ORG}-buyer` }), booking.id);
  expect(lineEvents(after, line.id).map((e) => [e.action, e.actorId, e.actor, e.source])).toEqual([
    ['line.queued', `${ORG}-buyer`, 'human', 'dev'],
    ['line.claimed', 'staff-src', 'human', 'web'],
    ['line.started', 'staff-src', 'human', 'dev'],
    ['line.confirmed', 'staff-src', 'human', 'web'],
  ]);
  // The booking's own status changes carry the surface of the change that caused them.
  const changes = after.events.filter((e) => e.action === 'booking.status-changed').map((e) => [e.detail?.to, e.source]);
  expect(changes).toEqual([
    ['in-progress', 'dev'],
    ['confirmed', 'web'],
  ]);

  // A production-style API (tokens verified against a JWKS): a direct REST call is dev there too.
  const other = await service.launch(ORG, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 10_100 }]);
  const jwksToken = await env.issuer.token({ org: 'staff-org', user: 'staff-src' });
  const otherLine = other.lines[0]!;
  const claimed = await post(jwksApi, jwksToken, `/api/v1/internal/fulfilment/bookings/${other.id}/lines/${otherLine.id}/claim`, {
    expectedVersion: otherLine.version,
  });
  expect(claimed.status).toBe(200);
  const { booking: claimedBooking } = (await claimed.json()) as { booking: BookingBody };
  expect(lineEvents(claimedBooking, otherLine.id).map((e) => [e.action, e.source])).toEqual([
    ['line.queued', 'dev'],
    ['line.claimed', 'dev'],
  ]);
});

test('the workers record system and a launch over REST dev; an operator marking a line uncertain at the console records web', async () => {
  const buyer = await service.token({ org: ORG, user: `${ORG}-buyer` });
  // A slow sandbox line (…93) stays in progress long enough to be marked uncertain; a plain one is confirmed by its worker.
  const { campaignId, planVersion } = await draftCampaign(service.api, buyer, [
    { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_093 },
    { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
  ]);
  await approve(service.api, buyer, campaignId, planVersion);
  const launched = await post(service.api, buyer, `/api/v1/campaigns/${campaignId}/launch`);
  expect(launched.status).toBe(202);
  const { booking } = (await launched.json()) as { booking: BookingBody };
  const settled = await waitForBooking(
    service.api,
    buyer,
    booking.id,
    (b) => b.lines[0]!.status === 'in-progress' && b.lines[1]!.status === 'confirmed',
  );
  // The launch itself was a direct REST call.
  expect(settled.events.find((e) => e.action === 'booking.launched')).toMatchObject({ actor: 'human', source: 'dev' });
  expect(settled.events.find((e) => e.action === 'line.confirmed')).toMatchObject({ actor: 'system', source: 'system' });

  const operator = await service.signIn({ user: 'op-src', workspace: ORG, permissions: ['operator:reconcile'] });
  const slow = settled.lines[0]!;
  await operator.page(`/console/operator/bookings/${booking.id}`);
  const res = await operator.form(`/console/operator/bookings/${booking.id}/lines/${slow.id}/uncertain`, {
    expectedVersion: String(slow.version),
    evidence: 'The supplier has not answered within its usual time.',
  });
  expect(res.status).toBe(303);
  const after = await readBooking(service.api, buyer, booking.id);
  expect(after.events.find((e) => e.action === 'line.marked-uncertain')).toMatchObject({
    actorId: 'op-src',
    actor: 'human',
    source: 'web',
  });
});

test('the mission journal names the console as the door a person’s approval came through', async () => {
  const human = await service.token({ org: ORG, user: `${ORG}-lead`, permissions: ['agent:approve', ...SPENDER_PERMISSIONS] });
  const agent = await service.token({ org: ORG, user: `${ORG}-lead`, agent: 'planner-bot' });
  const mandate = { allowedActions: ['campaign.launch'], budgetCeilingMinor: 1_000_000, currency: 'GBP' };
  expect((await post(service.api, human, '/api/v1/agent/mandates/planner-bot', mandate, 'PUT')).status).toBe(200);
  const prepareOne = async () => {
    const { campaignId, planVersion } = await draftCampaign(service.api, human, [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 12_000 },
    ]);
    await approve(service.api, human, campaignId, planVersion);
    const res = await post(service.api, agent, '/api/v1/agent/actions/prepare', {
      name: 'campaign.launch',
      parameters: { campaignId },
      budgetMinor: 12_000,
      currency: 'GBP',
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { approvalId: string; actionDigest: string };
  };

  const atConsole = await prepareOne();
  const lead = await service.signIn({ user: `${ORG}-lead`, workspace: ORG, permissions: ['agent:approve', ...SPENDER_PERMISSIONS] });
  await lead.page('/console/approvals');
  const approved = await lead.form(`/console/approvals/${atConsole.approvalId}/approve`, { expectedActionDigest: atConsole.actionDigest });
  expect(approved.status).toBe(303);

  const overRest = await prepareOne();
  const res = await post(service.api, human, `/api/v1/agent/approvals/${overRest.approvalId}/approve`, {
    expectedActionDigest: overRest.actionDigest,
  });
  expect(res.status).toBe(200);

  const entries = await env.db('mission_journal').whereIn('approval_id', [atConsole.approvalId, overRest.approvalId]);
  const by = (approvalId: string, type: string) => entries.find((e) => e.approval_id === approvalId && e.entry_type === type);
  expect(by(atConsole.approvalId, 'action.prepared')).toMatchObject({ actor: 'agent', source: 'api' });
  expect(by(atConsole.approvalId, 'action.approved')).toMatchObject({ actor: 'human', source: 'console' });
  expect(by(overRest.approvalId, 'action.approved')).toMatchObject({ actor: 'human', source: 'api' });
});
