import { dateOnly } from '../../dates';
import { toMinor } from '../../db/knex';
import type { LineOperation, LineStatus } from './statuses';

/** A status an operation takes its line to, or `from`: the status the line had when the operation was asked. */
type StateOf = LineStatus | 'from';

/**
 * One supplier operation on a line, declared once: every table of it (the line's edges, where
 * each step takes the line, the batched statements' states, the database's CHECK lists) is
 * generated from here.
 */
export interface OperationDeclaration {
  /** Where it takes its line: once asked, while its supplier call is in flight, once applied, once refused. */
  states: { requested: StateOf; inFlight: StateOf; applied: StateOf; refused: StateOf };
  /** The statuses a line may be in when it is asked (a booking is asked by the launch that creates its line). */
  askedFrom: readonly LineStatus[];
  /** Of those, the ones it reaches its supplier from, and so where a refusal may return the line. */
  sentFrom: readonly LineStatus[];
  /** The booking events it is recorded under: asked, its supplier call started, applied, refused. */
  events: { requested: string; started: string; applied: string; refused: string };
  /** Its start and a sandbox line's answer may go in one statement with other lines' (lines/batch.ts). */
  batches: boolean;
  /**
   * What it sets on its line beyond the status: once applied, and to put the line back as it was
   * before it was asked (a refusal, or a person finding an applied change not applied). A
   * booking's depend on its supplier's answer (lines/book.ts).
   */
  sets?: { applied(op: AskedValues): LinePatch; before(op: AskedValues): LinePatch };
  /** What its supplier is asked beyond the line as booked (lines/in-flight.ts), and what its events say of it. */
  asks?(op: AskedValues): Record<string, unknown>;
  figures?(op: AskedValues): Record<string, unknown>;
}

/** What an operation's record keeps of its line as asked: what it changes, and what it was before. */
export interface AskedValues {
  stop_before: unknown;
  budget_from_minor: string | number | null;
  budget_to_minor: string | number | null;
  end_date_to: string | Date | null;
}

type LinePatch = Record<string, unknown>;

/** The stop a pause or stop put on its line stands once applied (it was set when asked). */
const stopAsBefore = (op: AskedValues): LinePatch => ({ stop: op.stop_before ? JSON.stringify(op.stop_before) : null });

const stopLike = { requested: 'stop-requested', inFlight: 'stopping', applied: 'stopped', refused: 'from' } as const;
const unchanged = { requested: 'from', inFlight: 'from', applied: 'from', refused: 'from' } as const;

export const OPERATIONS: { readonly [K in LineOperation]: OperationDeclaration } = {
  book: {
    states: { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'rejected' },
    askedFrom: [],
    sentFrom: ['queued'],
    events: { requested: 'line.queued', started: 'line.attempt-started', applied: 'line.confirmed', refused: 'line.rejected' },
    batches: true,
  },
  pause: {
    states: stopLike,
    askedFrom: ['confirmed'],
    sentFrom: ['confirmed'],
    events: { requested: 'line.pause-requested', started: 'line.pause-started', applied: 'line.paused', refused: 'line.pause-refused' },
    batches: true,
    sets: { applied: () => ({}), before: stopAsBefore },
  },
  // A line nobody has sent is ended at once, and a workflow line staff are booking is taken over;
  // a paused line, one in doubt and a running one are asked of their supplier.
  stop: {
    states: stopLike,
    askedFrom: ['queued', 'in-progress', 'confirmed', 'reconciliation-required', 'stopped'],
    sentFrom: ['confirmed', 'reconciliation-required', 'stopped'],
    events: { requested: 'line.stop-requested', started: 'line.stop-started', applied: 'line.stopped', refused: 'line.stop-refused' },
    batches: true,
    sets: { applied: () => ({}), before: stopAsBefore },
  },
  resume: {
    states: { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'stopped' },
    askedFrom: ['stopped'],
    sentFrom: ['stopped'],
    events: { requested: 'line.resume-requested', started: 'line.resume-started', applied: 'line.resumed', refused: 'line.resume-refused' },
    batches: true,
    sets: { applied: () => ({ stop: null }), before: stopAsBefore },
  },
  // A running line keeps running, a paused one stays paused: only its budget (and end) moves. It may move money: never batched.
  'change-budget': {
    states: unchanged,
    askedFrom: ['confirmed', 'stopped'],
    sentFrom: ['confirmed', 'stopped'],
    events: {
      requested: 'line.budget-change-requested',
      started: 'line.change-budget-started',
      applied: 'line.budget-changed',
      refused: 'line.change-budget-refused',
    },
    batches: false,
    sets: { applied: (op) => ({ budget_minor: op.budget_to_minor }), before: (op) => ({ budget_minor: op.budget_from_minor }) },
    asks: (op) => ({ newBudgetMinor: toMinor(op.budget_to_minor), ...(op.end_date_to ? { newEndDate: dateOnly(op.end_date_to) } : {}) }),
    figures: (op) => ({
      budgetFromMinor: toMinor(op.budget_from_minor),
      budgetToMinor: toMinor(op.budget_to_minor),
      ...(op.end_date_to ? { endDateTo: dateOnly(op.end_date_to) } : {}),
    }),
  },
};

/** The kinds of operation asked of a line after its booking (rows of `line_operations`). */
export const OPERATION_KINDS = (Object.keys(OPERATIONS) as LineOperation[]).filter((k) => k !== 'book');

/** Where operation `op` takes a line asked from `from`. */
export function operationStates(op: LineOperation, from: LineStatus) {
  const s = OPERATIONS[op].states;
  const at = (state: StateOf): LineStatus => (state === 'from' ? from : state);
  return { requested: at(s.requested), inFlight: at(s.inFlight), applied: at(s.applied), refused: at(s.refused) };
}

/**
 * The moves no operation's own steps make: a line refused before anyone started it (staff reject
 * a workflow booking not yet taken up), a stop that ends a line without its supplier (never sent,
 * or staff confirm a workflow line's pause or stop), and a booking its supplier staged, created paused.
 */
const OTHER_EDGES: ReadonlyArray<[LineStatus, LineStatus]> = [
  ['queued', 'rejected'],
  ['stop-requested', 'stopped'],
  ['in-progress', 'stopped'],
];

/**
 * Every move a line may make: each operation's steps (asked, sent, applied, refused, unknown, and
 * a person's resolution of an unknown one), and the moves above. Anything else is refused.
 */
export function lineEdges(statuses: readonly LineStatus[]): Record<LineStatus, LineStatus[]> {
  const edges = new Map<LineStatus, Set<LineStatus>>(statuses.map((s) => [s, new Set()]));
  const add = (from: LineStatus, to: LineStatus) => from !== to && edges.get(from)!.add(to);
  for (const kind of Object.keys(OPERATIONS) as LineOperation[]) {
    const { askedFrom, sentFrom } = OPERATIONS[kind];
    for (const from of askedFrom) add(from, operationStates(kind, from).requested);
    for (const from of sentFrom) {
      const s = operationStates(kind, from);
      add(s.requested, s.inFlight);
      for (const settled of [s.applied, s.refused]) {
        add(s.inFlight, settled);
        add('reconciliation-required', settled);
      }
      add(s.inFlight, 'reconciliation-required');
    }
  }
  for (const [from, to] of OTHER_EDGES) add(from, to);
  return Object.fromEntries([...edges].map(([s, to]) => [s, statuses.filter((t) => to.has(t))])) as Record<LineStatus, LineStatus[]>;
}

/**
 * Each operation's start as SQL values (`k(kind, requested, in_flight, started, batches)`): the
 * statuses it waits in and is in flight in (null: the status the line was asked from), its start's
 * event, and whether it may start and settle without its line's lock, batched with other lines'.
 */
export const OPERATION_STARTS_SQL = `(values ${(Object.keys(OPERATIONS) as LineOperation[])
  .map((k) => {
    const { states, events, batches } = OPERATIONS[k];
    const status = (v: StateOf) => (v === 'from' ? 'null' : `'${v}'`);
    return `('${k}', ${status(states.requested)}, ${status(states.inFlight)}, '${events.started}', ${batches})`;
  })
  .join(', ')}) as k(kind, requested, in_flight, started, batches)`;
