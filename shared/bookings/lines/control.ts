import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Actor } from '../../auth/actor';
import { conflict } from '../../errors';
import type { JobMessage } from '../../queues/jobs';
import { closeOpenAttemptsSql } from '../../suppliers/attempts';
import type { LineRow } from '../booking-store';
import type { LineStop } from './state';
import { changeLine, lockLine, type LockedLine } from './store';
import { OPERATIONS } from './operations';
import { requestOperations, type RequestedOperation } from './request';

export const CONTROLS = ['pause', 'resume', 'stop'] as const;
export type Control = (typeof CONTROLS)[number];

const Note = z.string().trim().min(1).max(2000);
/** A campaign's pause, resume or stop: every line that can take it. */
export const CampaignControlSchema = z.strictObject({ note: Note.optional() }).meta({ id: 'CampaignControl' });
/** One line's pause, resume or stop, at the version the caller last read. */
export const LineControlSchema = z
  .strictObject({ expectedVersion: z.number().int().min(0), note: Note.optional() })
  .meta({ id: 'LineControl' });

/**
 * Why the line cannot take `control` now, or null when it can. A line has one operation in hand
 * at a time; a booking still with its supplier settles before it can be paused or stopped (its
 * answer must not be lost), except a workflow line, whose staff take the stop over.
 */
export function controlRefusal(line: LineRow, control: Control): string | null {
  if (line.operation_id) return `A ${line.operation} is already in hand on this line; wait for its outcome.`;
  const kind = line.stop?.kind;
  switch (control) {
    case 'pause':
      if (line.status === 'confirmed') return null;
      if (line.status === 'stopped') return kind === 'end' ? 'The line has ended.' : 'The line is already stopped.';
      return `A ${line.status} line is not running, so there is nothing to pause.`;
    case 'resume':
      if (line.status !== 'stopped') return `Only a paused or staged line can be resumed; this one is ${line.status}.`;
      if (kind === 'pause') return null;
      if (kind === 'staged') {
        return line.enableable ? null : "The staged line's creative evidence does not yet allow enabling it.";
      }
      return 'The line has ended; it cannot run again.';
    case 'stop':
      if (line.status === 'confirmed' || line.status === 'queued') return null;
      if (line.status === 'stopped') return kind === 'end' ? 'The line has already ended.' : null;
      // Nothing in hand (checked above): a booking in doubt, or a change the supplier's own figures
      // contradicted (verified control); stopping asks the supplier again, and is verified in turn.
      if (line.status === 'reconciliation-required') return null;
      if (line.status === 'in-progress' && line.execution_method) return null;
      if (line.status === 'in-progress') return 'Its booking is with the supplier now; stop it once the supplier has answered.';
      return `A ${line.status} line is already being stopped.`;
  }
}

/** The controls a line can take now, for refusals that name them. */
export const allowedControls = (line: LineRow): Control[] => CONTROLS.filter((c) => controlRefusal(line, c) === null);

/** What a line already shows of a control asked before (so asking again is not a failure). */
export function alreadyDone(line: LineRow, control: Control): boolean {
  if (control === 'pause')
    return line.operation === 'pause' && (line.status === 'stop-requested' || line.status === 'stopping' || line.stop?.kind === 'pause');
  if (control === 'stop') return line.stop?.kind === 'end' || (line.operation === 'stop' && line.operation_id !== null);
  return line.operation === 'resume' && line.operation_id !== null;
}

/** The line's `stop` once `control` is asked: a pause or an end, with who asked and why; a resume keeps it until applied. */
export function requestedStop(
  line: LineRow,
  control: Control,
  actor: Actor,
  note?: string,
  requestedAt = new Date().toISOString(),
): LineStop | null {
  if (control === 'resume') return line.stop;
  return { kind: control === 'pause' ? 'pause' : 'end', requestedAt, by: actor.actorId, ...(note ? { note } : {}) };
}

export interface ControlResult {
  line: LineRow;
  queued: JobMessage[];
}

/** A stop of a line nobody has sent yet ends it at once: there is nothing to tell the supplier. */
export const endsAtOnce = (line: LineRow, control: Control) => control === 'stop' && line.status === 'queued';

/**
 * Asks the line's supplier to pause, resume or stop it, under the line's lock (`locked`), in the
 * caller's transaction: as a batch of one (`requestControls`), or ended at once (`endsAtOnce`).
 */
export async function requestControl(
  trx: Knex,
  locked: LockedLine,
  control: Control,
  actor: Actor,
  opts: { note?: string; expectedVersion?: number } = {},
): Promise<ControlResult> {
  const { line } = locked;
  if (opts.expectedVersion !== undefined && opts.expectedVersion !== line.version) {
    throw conflict(`The line is at version ${line.version}, not ${opts.expectedVersion}. Read it again before acting.`, 'version_conflict');
  }
  const refusal = controlRefusal(line, control);
  if (refusal) {
    const allowed = allowedControls(line);
    throw conflict(`${refusal} Allowed now: ${allowed.length ? allowed.join(', ') : 'none'}.`, 'invalid_transition', 'terminal');
  }
  if (!endsAtOnce(line, control)) {
    const [asked] = await requestControls(trx, line.booking_id, [line], control, actor, opts.note);
    return { line: asked!.line, queued: [asked!.message] };
  }
  // Never sent: the supplier has nothing to stop. The stop is kept as an operation applied at once,
  // under the id its events name; written applied, it took no effect at a supplier and delivery has
  // nothing to verify (no effective time, no verification: the trigger watches updates only).
  const ref = { bookingId: line.booking_id, lineId: line.id, actor };
  const operationId = randomUUID();
  const detail = { operation: control, operationId, ...(opts.note ? { note: opts.note } : {}) };
  const stop = requestedStop(line, control, actor, opts.note);
  const patch = { operation: 'stop', stop: JSON.stringify(stop) };
  const { requested, applied } = OPERATIONS.stop.events;
  await changeLine(trx, { ...ref, to: 'stop-requested', patch, action: requested, detail }, locked);
  const reason = 'The line was never sent to its supplier; nothing was booked.';
  const record = trx('line_operations').insert({
    id: operationId,
    advertiser_id: line.advertiser_id,
    booking_id: line.booking_id,
    line_id: line.id,
    kind: 'stop',
    status: 'applied',
    from_status: line.status,
    stop_before: line.stop === null ? null : JSON.stringify(line.stop),
    note: opts.note ?? null,
    reason,
    requested_by: actor.actorId,
    settled_at: trx.fn.now(),
  });
  const ended = { ...ref, to: 'stopped' as const, action: applied, detail: { ...detail, reason }, writes: [record.toSQL()] };
  return { line: await changeLine(trx, ended), queued: [] };
}

/**
 * Asks each of `lines` (locked by the caller in this transaction, of booking `bookingId`, each
 * able to take `control` and none `endsAtOnce`) to pause, resume or stop: the operation's record,
 * the line's move to where it waits and its job, in one statement (`requestOperations`).
 */
export async function requestControls(
  trx: Knex,
  bookingId: string,
  lines: readonly LineRow[],
  control: Control,
  actor: Actor,
  note?: string,
): Promise<RequestedOperation[]> {
  const requestedAt = new Date().toISOString();
  const asked = await requestOperations(
    trx,
    bookingId,
    lines.map((line) => ({
      line,
      kind: control,
      stop: requestedStop(line, control, actor, note, requestedAt),
      stopBefore: line.stop,
      note,
      detail: note ? { note } : {},
    })),
    actor,
  );
  for (const [i, line] of lines.entries()) {
    // A workflow line staff were still booking: their managed booking is superseded by the stop.
    if (line.status !== 'in-progress') continue;
    const close = closeOpenAttemptsSql(trx, 'line', line.id, {
      status: 'superseded',
      detail: { by: 'stop', operationId: asked[i]!.operationId },
    });
    await trx.raw(close.sql, [...close.bindings]);
  }
  return asked;
}

/** One line's control, in its own transaction, under its lock. */
export function controlLine(
  db: Knex,
  ref: { bookingId: string; lineId: string },
  control: Control,
  actor: Actor,
  body: z.infer<typeof LineControlSchema>,
): Promise<ControlResult> {
  return db.transaction(async (trx) => {
    const locked = await lockLine(trx, ref.bookingId, ref.lineId);
    if (!locked) throw conflict('The line changed while this request ran. Read it again before acting.', 'version_conflict');
    return requestControl(trx, locked, control, actor, { note: body.note, expectedVersion: body.expectedVersion });
  });
}
