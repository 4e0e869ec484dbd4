import { isOpen, type LineStatus } from '../../shared/bookings/lines/state';
import type { Knex } from '../../shared/db/knex';
import type { ApiClient, TestEnv } from './api';

export interface PlanLineInput {
  channel: string;
  adapterKey: string;
  budgetMinor: number;
  creativeIds?: string[];
  dailyCapMinor?: number;
}

export interface Launched {
  campaignId: string;
  planId: string;
  booking: BookingBody;
  token: string;
}

export interface BookingBody {
  id: string;
  status: string;
  version: number;
  snapshotDigest: string;
  advertiserId: string;
  campaignId: string;
  lines: Array<{
    id: string;
    status: string;
    version: number;
    adapterKey: string;
    channel: string;
    budgetMinor: number;
    channelCampaignId: string;
    providerReference: string | null;
    providerAttemptId: string | null;
    executionMethod: string | null;
    workflowSteps?: Array<{ detail: string }> | null;
    pendingOperation?: string | null;
    stop?: { kind: string; by?: string } | null;
    dailyCapMinor?: number | null;
    claimedBy: string | null;
    assignedToUserId: string | null;
    evidence: string | null;
    creatives: Array<Record<string, unknown>>;
  }>;
  events: Array<{
    action: string;
    lineId: string | null;
    actor: string;
    source: string;
    actorId: string;
    detail?: Record<string, unknown>;
  }>;
  [k: string]: unknown;
}

export const SEVEN_CHANNELS = ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'] as const;

/** One sandbox line per channel, budgets chosen so that no sandbox trigger fires. */
export const sevenSandboxLines = (): PlanLineInput[] =>
  SEVEN_CHANNELS.map((channel, i) => ({ channel, adapterKey: `sandbox-${channel}`, budgetMinor: 10_000 + i * 100 }));

export async function post(api: ApiClient, token: string, path: string, body?: unknown, method = 'POST') {
  return api.fetch(path, {
    method,
    token,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
}

/** Creates a campaign over the given lines' channels and a plan; returns ids without approving. */
export async function draftCampaign(
  api: ApiClient,
  token: string,
  lines: PlanLineInput[],
  overrides: Record<string, unknown> = {},
): Promise<{ campaignId: string; planId: string; planVersion: number }> {
  const channels = [...new Set(lines.map((l) => l.channel))];
  const budget = lines.reduce((s, l) => s + l.budgetMinor, 0);
  const created = await post(api, token, '/api/v1/campaigns', {
    name: 'Spring launch',
    clientName: 'Acme Drinks',
    startDate: '2099-03-01',
    endDate: '2099-03-31',
    budgetMinor: budget,
    maximumCommitmentMinor: budget,
    channels,
    ...overrides,
  });
  if (created.status !== 201) throw new Error(`campaign create failed: ${created.status} ${await created.text()}`);
  const { campaign } = (await created.json()) as { campaign: { id: string } };
  const planned = await post(api, token, `/api/v1/campaigns/${campaign.id}/plan`, { lines }, 'PUT');
  if (planned.status !== 200) throw new Error(`plan failed: ${planned.status} ${await planned.text()}`);
  const { plan } = (await planned.json()) as { plan: { id: string; version: number } };
  return { campaignId: campaign.id, planId: plan.id, planVersion: plan.version };
}

export async function approve(api: ApiClient, token: string, campaignId: string, expectedVersion: number) {
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/plan/approve`, { expectedVersion });
  if (res.status !== 200) throw new Error(`approve failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { plan: { approvedDigest: string } }).plan;
}

/** Campaign → plan → approval → launch, as an advertiser's human user. */
export async function launchPlan(
  env: Pick<TestEnv, 'issuer'>,
  api: ApiClient,
  lines: PlanLineInput[],
  org = 'org-a',
  overrides: Record<string, unknown> = {},
): Promise<Launched> {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  const { campaignId, planId, planVersion } = await draftCampaign(api, token, lines, overrides);
  await approve(api, token, campaignId, planVersion);
  const res = await post(api, token, `/api/v1/campaigns/${campaignId}/launch`);
  if (res.status !== 202) throw new Error(`launch failed: ${res.status} ${await res.text()}`);
  const { booking } = (await res.json()) as { booking: BookingBody };
  return { campaignId, planId, booking, token };
}

export async function readBooking(api: ApiClient, token: string, bookingId: string): Promise<BookingBody> {
  const res = await api.fetch(`/api/v1/bookings/${bookingId}`, { token });
  if (res.status !== 200) throw new Error(`read booking failed: ${res.status}`);
  return ((await res.json()) as { booking: BookingBody }).booking;
}

export type BookingLineBody = BookingBody['lines'][number];

/** The booking's line with this id (a test names the wider shape it reads, if any). */
export function lineOf<L = BookingLineBody>(booking: BookingBody, lineId: string): L {
  const line = booking.lines.find((l) => l.id === lineId);
  if (!line) throw new Error(`line ${lineId} is not in booking ${booking.id}`);
  return line as unknown as L;
}

/** A one-line booking's line, as its owner reads it now. */
export async function readLine<L = BookingLineBody>(api: ApiClient, token: string, bookingId: string): Promise<L> {
  return (await readBooking(api, token, bookingId)).lines[0] as unknown as L;
}

/** Everything a refused request about a booking must leave alone: its row, lines, operations, amendments, attempts, queued work and events. */
export async function bookingFootprint(db: Knex, bookingId: string) {
  const count = async (q: Knex.QueryBuilder) => Number((await q.count({ n: '*' }))[0]!.n);
  return {
    booking: await db('bookings').where({ id: bookingId }).first('status', 'version', 'line_counts'),
    lines: await db('booking_lines')
      .where({ booking_id: bookingId })
      .orderBy('id')
      .select('id', 'status', 'version', 'operation', 'operation_id', 'stop', 'budget_minor'),
    operations: await count(db('line_operations').where({ booking_id: bookingId })),
    amendments: await count(db('booking_amendments').where({ booking_id: bookingId })),
    attempts: await db('supplier_attempts').where({ booking_id: bookingId }).orderBy('id').select('id', 'status'),
    outbox: await count(db('outbox').whereRaw("payload->>'bookingId' = ?", [bookingId])),
    events: await count(db('booking_events').where({ booking_id: bookingId })),
  };
}

/** Polls until the predicate holds for the booking (workers run asynchronously). */
export async function waitForBooking(
  api: ApiClient,
  token: string,
  bookingId: string,
  done: (b: BookingBody) => boolean,
  timeoutMs = 20_000,
): Promise<BookingBody> {
  const deadline = Date.now() + timeoutMs;
  let last: BookingBody | undefined;
  while (Date.now() < deadline) {
    last = await readBooking(api, token, bookingId);
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`booking ${bookingId} did not settle: ${JSON.stringify(last?.lines.map((l) => l.status))}`);
}

export const allDefinite = (b: BookingBody) =>
  b.lines.every((l) => !['queued', 'in-progress'].includes(l.status) || (l.executionMethod !== null && l.status === 'queued'));

/** Whether a booking's stored line counts say what its lines say (zero counts may be kept or left out). */
export function sameCounts(stored: Record<string, number>, lines: readonly string[]): boolean {
  const actual: Record<string, number> = {};
  for (const s of lines) actual[s] = (actual[s] ?? 0) + 1;
  const statuses = new Set([...Object.keys(stored), ...Object.keys(actual)]);
  return [...statuses].every((s) => (stored[s] ?? 0) === (actual[s] ?? 0));
}

/** The booking's stored counts and status say what its lines, as stored, say. */
export async function expectCountsAgree(db: Knex, bookingId: string): Promise<void> {
  const booking = await db('bookings').where({ id: bookingId }).first('status', 'line_counts');
  const statuses = (await db('booking_lines').where({ booking_id: bookingId }).pluck('status')) as LineStatus[];
  expect(sameCounts(booking.line_counts, statuses)).toBe(true);
  expect(booking.status).toBe(bookingStatusOf(statuses));
}

/**
 * The spec's booking-status rule restated as the tests' oracle (the product applies it in the
 * database, `booking_status_of`): all queued → queued; any other open line → in-progress
 * (stopping while only stops are open); all confirmed → confirmed; all rejected → rejected; all
 * stopped → stopped; otherwise partially-confirmed if anything was confirmed, else stopped if
 * anything was stopped, else rejected.
 */
export function bookingStatusOf(lines: readonly LineStatus[]): string {
  if (lines.length === 0 || lines.every((s) => s === 'queued')) return 'queued';
  const open = lines.filter(isOpen);
  if (open.length) return open.every((s) => s === 'stop-requested' || s === 'stopping') ? 'stopping' : 'in-progress';
  for (const only of ['confirmed', 'rejected', 'stopped'] as const) if (lines.every((s) => s === only)) return only;
  if (lines.includes('confirmed')) return 'partially-confirmed';
  return lines.includes('stopped') ? 'stopped' : 'rejected';
}
