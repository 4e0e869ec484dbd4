import type { Knex } from 'knex';
import { SYSTEM } from '../../auth/actor';
import type { BookingOutcome, BookingRequest } from '../../adapters/adapter';
import { toMinor } from '../../db/knex';
import { dateOnly } from '../../dates';
import { lineEnableable } from '../../creatives/creative-approvals';
import { bookLineJobId } from '../../queues/jobs';
import { openAttemptQuery } from '../../suppliers/attempts';
import type { LineRow } from '../booking-store';
import { changeLine, stepLine } from './store';
import type { Definite, LineKind } from './kind';
import { OPERATIONS } from './operations';

/** What the supplier is asked to book for a line. */
const requestOf = (line: LineRow, flight: { start_date: string; end_date: string }, attemptId: string): BookingRequest => ({
  attemptId,
  bookingId: line.booking_id,
  lineId: line.id,
  channel: line.channel,
  budgetMinor: toMinor(line.budget_minor),
  executionMode: line.execution_mode,
  channelCampaignId: line.channel_campaign_id,
  startDate: dateOnly(flight.start_date),
  endDate: dateOnly(flight.end_date),
  supplierProduct: line.supplier_product ?? null,
  ...(line.daily_cap_minor !== null && line.daily_cap_minor !== undefined ? { dailyCapMinor: toMinor(line.daily_cap_minor) } : {}),
});

type Answer = Extract<Definite<BookingOutcome>, { kind: 'confirmed' | 'rejected' }>;

/**
 * What a booking's outcome sets on its line, whoever decided it (its supplier's answer, staff
 * confirming or rejecting a workflow line): confirmed, the supplier's reference and when; rejected, why.
 */
export function bookingOutcomePatch(q: Knex, s: { applied: boolean; providerReference?: string | null; evidence?: string | null }) {
  return s.applied
    ? { provider_reference: s.providerReference, confirmed_at: q.fn.now(), ...(s.evidence ? { evidence: s.evidence } : {}) }
    : { evidence: s.evidence ?? null };
}

/** How a supplier's definite answer changes its line, whichever path records it: its patch and its event. */
function outcomeChange(q: Knex, attemptId: string | null, outcome: Answer) {
  const confirmed = outcome.kind === 'confirmed';
  const patch = bookingOutcomePatch(
    q,
    confirmed ? { applied: true, providerReference: outcome.providerReference } : { applied: false, evidence: outcome.reason },
  );
  return { patch, ...outcomeEvent(attemptId, outcome) };
}

const outcomeEvent = (attemptId: string | null, outcome: Answer) =>
  outcome.kind === 'confirmed'
    ? { action: OPERATIONS.book.events.applied, detail: { providerReference: outcome.providerReference, attemptId } }
    : { action: OPERATIONS.book.events.refused, detail: { reason: outcome.reason, attemptId } };

/** A line's booking: the first operation on it, asked by the launch that creates the line. */
export const BOOK: LineKind<BookingRequest, BookingOutcome, null> = {
  jobId: (job) => bookLineJobId(job.lineId),

  read(trx, job) {
    // Only our own supplier attempts count: a managed-booking attempt belongs to the staff member working the line.
    const open = openAttemptQuery(trx, 'line', job.lineId, 'book').select('id').limit(1).toSQL();
    return {
      sql: `select json_build_object('start_date', c.start_date, 'end_date', c.end_date, 'open_attempt_id', (${open.sql}))
              from campaigns c where c.id = b.campaign_id`,
      bindings: open.bindings,
    };
  },

  // A booking has no operation record: the line's only one.
  own: () => null,

  request: (line, read, _op, attemptId) => requestOf(line, read, attemptId),

  answer({ attemptId }, outcome) {
    if (outcome.kind === 'staged') return null;
    const confirmed = outcome.kind === 'confirmed';
    const { action, detail } = outcomeEvent(attemptId, outcome);
    const change = {
      from: 'in-progress' as const,
      to: outcome.kind,
      applied: confirmed,
      providerReference: confirmed ? outcome.providerReference : null,
      evidence: confirmed ? null : outcome.reason,
      action,
      detail,
    };
    return { result: outcome.kind, change };
  },

  async answerAlone(db, { bookingId, lineId }, { attemptId }, outcome, close) {
    if (outcome.kind === 'staged') return null;
    // A live line's money moves in the same transaction as its step.
    const stepped = await db.transaction((trx) =>
      stepLine(trx, {
        bookingId,
        lineId,
        from: 'in-progress',
        to: outcome.kind,
        where: { sql: 'provider_attempt_id = ?', bindings: [attemptId] },
        companionWrite: close('updated'),
        // Every path that closes a line's attempt moves the line off in-progress under its lock; if
        // one ever did not, the attempt would be found closed here and the statement undone.
        companionMustWrite: true,
        ...outcomeChange(trx, attemptId, outcome),
        actor: SYSTEM,
      }),
    );
    return stepped ? outcome.kind : null;
  },

  async settle(trx, { bookingId, lineId }, { attemptId }, outcome, { locked }, closer) {
    if (outcome.kind !== 'staged') {
      const change = { to: outcome.kind, ...outcomeChange(trx, attemptId, outcome) };
      await changeLine(trx, { bookingId, lineId, ...change, actor: SYSTEM, companionWrite: closer?.embed() }, locked);
      return outcome.kind;
    }
    // Created paused by its supplier: it stays stopped until its evidence allows it to run.
    const staged = await trx('booking_lines').where({ id: lineId }).first('adapter_key', 'creatives');
    const enableable = await lineEnableable(trx, staged);
    await changeLine(
      trx,
      {
        bookingId,
        lineId,
        to: 'stopped',
        patch: { provider_reference: outcome.providerReference, enableable, stop: JSON.stringify({ kind: 'staged' }) },
        actor: SYSTEM,
        action: 'line.staged',
        companionWrite: closer?.embed(),
        detail: { providerReference: outcome.providerReference, attemptId, enableable },
      },
      locked,
    );
    return 'stopped';
  },
};
