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
  /** The booking events its outcome is recorded under (applied, refused), then its request. */
  events: readonly [applied: string, refused: string, requested: string];
  /** Its start and a sandbox line's answer may go in one statement with other lines' (line-operation-batch.ts). */
  batches: boolean;
}

const stopLike = { requested: 'stop-requested', inFlight: 'stopping', applied: 'stopped', refused: 'from' } as const;
const unchanged = { requested: 'from', inFlight: 'from', applied: 'from', refused: 'from' } as const;

export const OPERATIONS: { readonly [K in LineOperation]: OperationDeclaration } = {
  // A booking's steps have statements of their own (line-step-batch.ts).
  book: {
    states: { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'rejected' },
    askedFrom: [],
    sentFrom: ['queued'],
    events: ['line.confirmed', 'line.rejected', 'line.queued'],
    batches: false,
  },
  pause: {
    states: stopLike,
    askedFrom: ['confirmed'],
    sentFrom: ['confirmed'],
    events: ['line.paused', 'line.pause-refused', 'line.pause-requested'],
    batches: true,
  },
  // A line nobody has sent is ended at once, and a workflow line staff are booking is taken over;
  // a paused line, one in doubt and a running one are asked of their supplier.
  stop: {
    states: stopLike,
    askedFrom: ['queued', 'in-progress', 'confirmed', 'reconciliation-required', 'stopped'],
    sentFrom: ['confirmed', 'reconciliation-required', 'stopped'],
    events: ['line.stopped', 'line.stop-refused', 'line.stop-requested'],
    batches: true,
  },
  resume: {
    states: { requested: 'queued', inFlight: 'in-progress', applied: 'confirmed', refused: 'stopped' },
    askedFrom: ['stopped'],
    sentFrom: ['stopped'],
    events: ['line.resumed', 'line.resume-refused', 'line.resume-requested'],
    batches: true,
  },
  // A running line keeps running, a paused one stays paused: only its budget (and end) moves. It may move money: never batched.
  'change-budget': {
    states: unchanged,
    askedFrom: ['confirmed', 'stopped'],
    sentFrom: ['confirmed', 'stopped'],
    events: ['line.budget-changed', 'line.change-budget-refused', 'line.budget-change-requested'],
    batches: false,
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

/** The statuses each batched operation waits in and is in flight in, as SQL values (`k(kind, requested, in_flight)`). */
const batched = OPERATION_KINDS.filter((k) => OPERATIONS[k].batches).map((k) => ({ k, ...OPERATIONS[k].states }));
export const BATCHED_STATES_SQL = `(values ${batched.map((b) => `('${b.k}', '${b.requested}', '${b.inFlight}')`).join(', ')}) as k(kind, requested, in_flight)`;
