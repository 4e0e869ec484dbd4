import { sellerOfAdapter } from '../config/adcp-keys';
import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import { addDays, dateOnly } from '../dates';
import { recordEvent } from '../events/record';
import { canMove, type LineStatus } from '../bookings/lines/state';
import { changeLine, lockLine } from '../bookings/lines/store';
import type { AdapterKind } from '../adapters/catalogue';

/**
 * Verified control (docs/bookings.md): a pause, stop or budget or end-date change a supplier
 * acknowledged is proven by what it says afterwards, its read-back and its own delivery. A
 * change is `pending` until a full day after its effective day has been reported (after the
 * supplier's reporting delay) without contrary evidence, then `verified`, and still watched
 * through the restatement window (until its booking closes out): delivery after a stop, beyond a
 * budget or past a new end, or a read-back that disagrees, fails it, at any time, and the line
 * goes to a person.
 */
export interface VerificationSettings {
  /** Hours after a day ends before the supplier's figures for it are complete enough to prove a change by. */
  reportingDelayHours: number;
  /** Spend after the effective day tolerated as impressions in flight, in percent of the line's budget. */
  tolerancePercent: number;
}

/** The settings for one supplier: its own reporting delay where it has one, else the deployment's. */
export function verificationSettingsFor(
  config: {
    CONTROL_TOLERANCE_PERCENT: number;
    CONTROL_REPORTING_DELAY_HOURS: number;
    ADCP_SELLERS: ReadonlyArray<{ key: string; reportingDelayHours?: number }>;
  },
  adapter: { key: string; kind: AdapterKind },
): VerificationSettings {
  const seller = sellerOfAdapter(config.ADCP_SELLERS, adapter.key);
  // The sandbox's own suppliers report a day as soon as it is over.
  const own = adapter.kind === 'sandbox' || adapter.kind === 'native-staged' ? 0 : seller?.reportingDelayHours;
  return { reportingDelayHours: own ?? config.CONTROL_REPORTING_DELAY_HOURS, tolerancePercent: config.CONTROL_TOLERANCE_PERCENT };
}

export type VerificationState = 'pending' | 'verified' | 'failed' | 'superseded';

interface Watched {
  id: string;
  line_id: string;
  booking_id: string;
  advertiser_id: string;
  campaign_id: string;
  kind: 'pause' | 'stop' | 'change-budget';
  verification: 'pending' | 'verified';
  verification_version: number;
  effective_at: Date;
  budget_to_minor: string | null;
  end_date_to: string | null;
  line_status: LineStatus;
  line_operation_id: string | null;
  line_budget_minor: string;
  offset_days: number;
  execution_mode: 'sandbox' | 'live';
  drift: string[] | null;
  read_back: unknown;
  resumed_on: string | null;
  fetched_at: Date | null;
  as_of: Date | null;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface Decision {
  state: VerificationState;
  evidence: Record<string, unknown>;
}

/**
 * The rule, on one change and the line's days: what delivery and the read-back say of it, now.
 * Null: nothing new (still pending, or verified and still agreeing).
 */
export function decide(
  w: Pick<
    Watched,
    | 'kind'
    | 'verification'
    | 'effective_at'
    | 'budget_to_minor'
    | 'end_date_to'
    | 'line_budget_minor'
    | 'drift'
    | 'read_back'
    | 'resumed_on'
  >,
  days: ReadonlyArray<{ day: string; spendMinor: number; impressions: number }>,
  now: Date,
  reported: { fetchedAt: Date | null; asOf: Date | null; final?: boolean },
  s: VerificationSettings,
): Decision | null {
  const effectiveDay = dateOnly(w.effective_at);
  const tolerance = Math.floor((Number(w.line_budget_minor) * s.tolerancePercent) / 100);
  const asked = { operation: w.kind, effectiveAt: w.effective_at.toISOString(), ...askedFigures(w) };
  if (w.drift?.length) return { state: 'failed', evidence: { asked, reason: 'read-back', sellerShows: w.read_back, drift: w.drift } };

  let lastDayToSee = effectiveDay;
  if (w.kind === 'pause' || w.kind === 'stop') {
    const until = w.kind === 'pause' ? w.resumed_on : null;
    if (until && until <= addDays(effectiveDay, 1)) {
      return w.verification === 'pending'
        ? { state: 'superseded', evidence: { asked, reason: 'resumed before a full day could show the pause', resumedOn: until } }
        : null;
    }
    // The days that must be empty: after the effective day (which may carry what was in flight), until a resume.
    const served = days.filter((d) => d.day > effectiveDay && (!until || d.day < until) && (d.spendMinor > 0 || d.impressions > 0));
    const spent = served.reduce((sum, d) => sum + d.spendMinor, 0);
    if (spent > tolerance) return failed(asked, `delivered after the ${w.kind}`, served, spent, tolerance);
  } else {
    const budget = Number(w.budget_to_minor);
    const spent = days.reduce((sum, d) => sum + d.spendMinor, 0);
    if (spent > budget + tolerance) {
      return failed(asked, 'delivered beyond the new budget', days, spent, tolerance, { budgetMinor: budget, totalSpendMinor: spent });
    }
    if (w.end_date_to) {
      const after = days.filter((d) => d.day > w.end_date_to! && (d.spendMinor > 0 || d.impressions > 0));
      const afterSpend = after.reduce((sum, d) => sum + d.spendMinor, 0);
      if (after.length && afterSpend > tolerance) return failed(asked, 'delivered after the new end date', after, afterSpend, tolerance);
      if (w.end_date_to > lastDayToSee) lastDayToSee = w.end_date_to;
    }
  }
  if (w.verification === 'verified') return null;
  // At closeout every day is final and the restatement window is over: nothing more will be said.
  if (reported.final) return { state: 'verified', evidence: { asked, reason: 'the final figures agree', final: true } };
  // Proven once a full day after the change (or after the new end) has been reported, after the delay.
  const seen = new Date(`${addDays(lastDayToSee, 2)}T00:00:00Z`);
  const due = new Date(seen.getTime() + s.reportingDelayHours * HOUR_MS);
  const covered = reported.asOf !== null && reported.asOf.getTime() >= seen.getTime() - 60_000;
  const fresh = reported.fetchedAt !== null && reported.fetchedAt.getTime() >= due.getTime();
  if (now >= due && covered && fresh) {
    return {
      state: 'verified',
      evidence: { asked, reason: 'delivery after the change agrees', reportedAsOf: reported.asOf!.toISOString() },
    };
  }
  return null;
}

function askedFigures(w: Pick<Watched, 'kind' | 'budget_to_minor' | 'end_date_to'>): Record<string, unknown> {
  if (w.kind !== 'change-budget') return {};
  return { budgetToMinor: Number(w.budget_to_minor), ...(w.end_date_to ? { endDateTo: w.end_date_to } : {}) };
}

function failed(
  asked: Record<string, unknown>,
  reason: string,
  days: ReadonlyArray<{ day: string; spendMinor: number; impressions: number }>,
  spentMinor: number,
  toleranceMinor: number,
  more: Record<string, unknown> = {},
): Decision {
  return {
    state: 'failed',
    evidence: {
      asked,
      reason,
      deliveredSince: days.map((d) => ({ date: d.day, impressions: d.impressions, spendMinor: d.spendMinor })),
      spentMinor,
      toleranceMinor,
      ...more,
    },
  };
}

const WATCHED_SQL = `
  select o.id, o.line_id, o.booking_id, o.advertiser_id, b.campaign_id, o.kind, o.verification, o.verification_version,
         o.effective_at, o.budget_to_minor, to_char(o.end_date_to, 'YYYY-MM-DD') as end_date_to,
         l.status as line_status, l.operation_id as line_operation_id, l.budget_minor as line_budget_minor,
         l.execution_mode, coalesce(sc.offset_days, 0) as offset_days,
         a.detail -> 'detail' -> 'drift' as drift, a.detail -> 'detail' -> 'readBack' as read_back,
         (select to_char(min(r.effective_at), 'YYYY-MM-DD') from line_operations r
           where r.line_id = o.line_id and r.kind = 'resume' and r.status = 'applied' and r.effective_at > o.effective_at) as resumed_on,
         f.succeeded_at as fetched_at, f.as_of
    from line_operations o
    join booking_lines l on l.id = o.line_id
    join bookings b on b.id = o.booking_id
    left join sandbox_clocks sc on sc.advertiser_id = o.advertiser_id
    left join supplier_attempts a on a.id = o.attempt_id
    left join delivery_fetches f on f.line_id = o.line_id
   where o.id = ? and o.verification in ('pending', 'verified') and b.closed_out_at is null
   for update of o skip locked`;

export interface VerifyScope {
  adapterKey?: string;
  advertiserId?: string;
  lineIds?: readonly string[];
  real?: Date;
}

export interface VerifyResult {
  verified: number;
  failed: number;
  superseded: number;
}

/**
 * Looks at every watched change in scope: decides it where the evidence now says, each in its
 * own transaction with its row locked (`skip locked`: workers sweeping together never decide one
 * twice). A failure moves the line to reconciliation-required (`line.control_failed`) when it
 * can move there, and always tells subscribers.
 */
export async function verifyControls(db: Knex, scope: VerifyScope, settings: VerificationSettings): Promise<VerifyResult> {
  const result: VerifyResult = { verified: 0, failed: 0, superseded: 0 };
  const real = scope.real ?? new Date();
  const ids = (await db('line_operations as o')
    .join('booking_lines as l', 'l.id', 'o.line_id')
    .whereIn('o.verification', ['pending', 'verified'])
    .modify((q) => {
      if (scope.adapterKey) q.where('l.adapter_key', scope.adapterKey);
      if (scope.advertiserId) q.where('o.advertiser_id', scope.advertiserId);
      if (scope.lineIds) q.whereIn('o.line_id', [...scope.lineIds]);
    })
    .orderBy('o.effective_at')
    .pluck('o.id')) as string[];
  for (const id of ids) {
    const state = await db.transaction((trx) => decideOne(trx, id, real, settings, false));
    if (state === 'verified') result.verified++;
    if (state === 'failed') result.failed++;
    if (state === 'superseded') result.superseded++;
  }
  return result;
}

/**
 * A booking closing out: its changes still pending are decided on the final figures (every day
 * final, the restatement window over), so none is left pending for ever. In the closeout's
 * transaction, before the booking is marked closed; one it could not decide yet keeps the booking open.
 */
export async function decideOnFinalFigures(trx: Knex, bookingId: string, tolerancePercent: number): Promise<{ undecided: number }> {
  const ids = (await trx('line_operations')
    .where({ booking_id: bookingId, verification: 'pending' })
    .orderBy('effective_at')
    .pluck('id')) as string[];
  let undecided = 0;
  // A change a poll is deciding right now is skipped, not waited for: the closeout waits for its next run.
  for (const id of ids) if (!(await decideOne(trx, id, new Date(), { reportingDelayHours: 0, tolerancePercent }, true))) undecided++;
  return { undecided };
}

/** One watched change, its row locked (skipped when another worker holds it): decided and recorded where the evidence now says. */
async function decideOne(
  trx: Knex,
  id: string,
  real: Date,
  settings: VerificationSettings,
  final: boolean,
): Promise<VerificationState | null> {
  const { rows } = await trx.raw<{ rows: Watched[] }>(WATCHED_SQL, [id]);
  const w = rows[0];
  if (!w) return null;
  const days = (
    (await trx('delivery_days')
      .where({ line_id: w.line_id })
      .orderBy('day')
      .select(trx.raw("to_char(day, 'YYYY-MM-DD') as day"), 'spend_minor', 'impressions')) as Array<{
      day: string;
      spend_minor: string;
      impressions: string;
    }>
  ).map((d) => ({ day: d.day, spendMinor: Number(d.spend_minor), impressions: Number(d.impressions) }));
  const offset = w.execution_mode === 'sandbox' ? Number(w.offset_days) * DAY_MS : 0;
  const decision = decide(
    w,
    days,
    new Date(real.getTime() + offset),
    {
      fetchedAt: w.fetched_at ? new Date(new Date(w.fetched_at).getTime() + offset) : null,
      asOf: w.as_of ? new Date(w.as_of) : null,
      final,
    },
    settings,
  );
  if (!decision) return null;
  await record(trx, w, decision);
  return decision.state;
}

async function record(trx: Knex, w: Watched, d: Decision): Promise<void> {
  const version = w.verification_version + 1;
  await trx('line_operations')
    .where({ id: w.id })
    .update({
      verification: d.state,
      verification_version: version,
      verification_evidence: JSON.stringify(d.evidence),
      verification_decided_at: trx.fn.now(),
    });
  if (d.state !== 'failed') return;
  // The line goes to a person, unless another change is under way on it or it is already there.
  const locked = await lockLine(trx, w.booking_id, w.line_id);
  if (locked && !locked.line.operation_id && canMove(locked.line.status, 'reconciliation-required')) {
    await changeLine(
      trx,
      {
        bookingId: w.booking_id,
        lineId: w.line_id,
        to: 'reconciliation-required',
        actor: SYSTEM,
        action: 'line.control_failed',
        detail: { operation: w.kind, operationId: w.id, reason: String(d.evidence.reason), spentMinor: Number(d.evidence.spentMinor ?? 0) },
      },
      locked,
    );
  }
  await recordEvent(trx, {
    workspaceId: w.advertiser_id,
    type: 'line.control_failed',
    subjectId: w.id,
    subjectVersion: version,
    body: {
      campaignId: w.campaign_id,
      bookingId: w.booking_id,
      lineId: w.line_id,
      operation: w.kind,
      reason: String(d.evidence.reason),
      spentAfterMinor: typeof d.evidence.spentMinor === 'number' ? d.evidence.spentMinor : null,
    },
  });
}
