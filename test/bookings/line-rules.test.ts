import { allowedControls, alreadyDone, controlRefusal, type Control } from '../../shared/bookings/lines/control';
import { outcomeAction, settlement } from '../../shared/bookings/lines/settle';
import type { LineRow } from '../../shared/bookings/booking-store';
import type { HeldOperation } from '../../shared/bookings/lines/operation-store';
import type { LineOperation, LineStatus, LineStop, StopKind } from '../../shared/bookings/lines/state';

// Pure rules: the tables every path that asks for or settles a line operation reads.

const line = (status: LineStatus, over: Partial<LineRow> = {}): LineRow =>
  ({ status, operation: 'book', operation_id: null, stop: null, enableable: false, execution_method: null, ...over }) as LineRow;
const stopped = (kind: StopKind, over: Partial<LineRow> = {}) => line('stopped', { stop: { kind }, ...over });

describe('controlRefusal: whether a line can take a pause, resume or stop now', () => {
  test.each<[string, LineRow, Control, string | null]>([
    // Pause: only a running line.
    ['a running line pauses', line('confirmed'), 'pause', null],
    ['a paused line', stopped('pause'), 'pause', 'The line is already stopped.'],
    ['an ended line', stopped('end'), 'pause', 'The line has ended.'],
    ['a queued line', line('queued'), 'pause', 'A queued line is not running, so there is nothing to pause.'],
    ['a line with its supplier', line('in-progress'), 'pause', 'A in-progress line is not running, so there is nothing to pause.'],
    [
      'a line in doubt',
      line('reconciliation-required'),
      'pause',
      'A reconciliation-required line is not running, so there is nothing to pause.',
    ],
    // Resume: a paused line, or a staged one its creative evidence allows.
    ['a paused line resumes', stopped('pause'), 'resume', null],
    ['a staged line allowed to run', stopped('staged', { enableable: true }), 'resume', null],
    ['a staged line not yet allowed', stopped('staged'), 'resume', "The staged line's creative evidence does not yet allow enabling it."],
    ['an ended line', stopped('end'), 'resume', 'The line has ended; it cannot run again.'],
    ['a running line', line('confirmed'), 'resume', 'Only a paused or staged line can be resumed; this one is confirmed.'],
    // Stop: anything not ended and not with its supplier, a workflow line and a line in doubt included.
    ['a running line stops', line('confirmed'), 'stop', null],
    ['a queued line stops', line('queued'), 'stop', null],
    ['a paused line stops', stopped('pause'), 'stop', null],
    ['a staged line stops', stopped('staged'), 'stop', null],
    ['a line in doubt stops', line('reconciliation-required'), 'stop', null],
    ['a workflow line staff are booking stops', line('in-progress', { execution_method: 'manual' }), 'stop', null],
    [
      'a line with its supplier',
      line('in-progress'),
      'stop',
      'Its booking is with the supplier now; stop it once the supplier has answered.',
    ],
    ['an ended line', stopped('end'), 'stop', 'The line has already ended.'],
    ['a line being stopped', line('stop-requested'), 'stop', 'A stop-requested line is already being stopped.'],
    ['a line stopping', line('stopping'), 'stop', 'A stopping line is already being stopped.'],
  ])('%s', (_name, l, control, refusal) => {
    expect(controlRefusal(l, control)).toBe(refusal);
  });

  test.each<Control>(['pause', 'resume', 'stop'])('a line with an operation in hand takes no %s', (control) => {
    const busy = { operation: 'change-budget', operation_id: 'op-1' } as const;
    for (const l of [line('confirmed', busy), stopped('pause', busy), line('queued', busy)]) {
      expect(controlRefusal(l, control)).toBe('A change-budget is already in hand on this line; wait for its outcome.');
    }
  });

  test('the controls a refusal names are exactly those not refused', () => {
    expect(allowedControls(line('confirmed'))).toEqual(['pause', 'stop']);
    expect(allowedControls(stopped('pause'))).toEqual(['resume', 'stop']);
    expect(allowedControls(stopped('end'))).toEqual([]);
    expect(allowedControls(line('in-progress'))).toEqual([]);
  });

  test.each<[string, LineRow, Control, boolean]>([
    ['a pause requested', line('stop-requested', { operation: 'pause' }), 'pause', true],
    ['a pause in flight', line('stopping', { operation: 'pause' }), 'pause', true],
    ['a pause applied', stopped('pause', { operation: 'pause' }), 'pause', true],
    ['a stop in flight, asked to pause', line('stopping', { operation: 'stop' }), 'pause', false],
    ['an ended line', stopped('end'), 'stop', true],
    ['a stop in hand', line('stop-requested', { operation: 'stop', operation_id: 'op-1' }), 'stop', true],
    ['a stop settled, the line paused', stopped('pause', { operation: 'stop' }), 'stop', false],
    ['a resume in hand', line('queued', { operation: 'resume', operation_id: 'op-1' }), 'resume', true],
    ['a resume settled', line('confirmed', { operation: 'resume' }), 'resume', false],
  ])('asked again, %s is already done: %s', (_name, l, control, done) => {
    expect(alreadyDone(l, control)).toBe(done);
  });
});

const op = (kind: HeldOperation['kind'], from: LineStatus, over: Partial<HeldOperation> = {}): HeldOperation =>
  ({ id: 'op-1', kind, from_status: from, stop_before: null, budget_from_minor: null, budget_to_minor: null, ...over }) as HeldOperation;
const pausedBefore: LineStop = { kind: 'pause', by: 'someone' };

describe('settlement: where an operation’s outcome takes its line, and what it changes', () => {
  test.each<[string, HeldOperation, boolean, { from: LineStatus; to: LineStatus; patch: Record<string, unknown> }]>([
    ['a pause applied', op('pause', 'confirmed'), true, { from: 'stopping', to: 'stopped', patch: { operation_id: null } }],
    [
      'a pause refused: running again, its stop cleared',
      op('pause', 'confirmed'),
      false,
      { from: 'stopping', to: 'confirmed', patch: { operation_id: null, stop: null } },
    ],
    ['a stop of a paused line applied', op('stop', 'stopped'), true, { from: 'stopping', to: 'stopped', patch: { operation_id: null } }],
    [
      'a stop of a paused line refused: paused as before',
      op('stop', 'stopped', { stop_before: pausedBefore }),
      false,
      { from: 'stopping', to: 'stopped', patch: { operation_id: null, stop: JSON.stringify(pausedBefore) } },
    ],
    [
      'a resume applied: running, its stop cleared',
      op('resume', 'stopped'),
      true,
      { from: 'in-progress', to: 'confirmed', patch: { operation_id: null, stop: null } },
    ],
    [
      'a resume refused: stopped as before',
      op('resume', 'stopped', { stop_before: pausedBefore }),
      false,
      { from: 'in-progress', to: 'stopped', patch: { operation_id: null, stop: JSON.stringify(pausedBefore) } },
    ],
    [
      'a budget change applied: the status kept, the budget moved',
      op('change-budget', 'confirmed', { budget_from_minor: '10000', budget_to_minor: '12000' }),
      true,
      { from: 'confirmed', to: 'confirmed', patch: { operation_id: null, budget_minor: '12000' } },
    ],
    [
      'a budget change of a paused line refused: the budget as before',
      op('change-budget', 'stopped', { budget_from_minor: '10000', budget_to_minor: '12000' }),
      false,
      { from: 'stopped', to: 'stopped', patch: { operation_id: null, budget_minor: '10000' } },
    ],
  ])('%s', (_name, held, applied, expected) => {
    expect(settlement(held, { applied })).toEqual(expected);
  });

  test('evidence and the supplier reference are kept whichever the outcome', () => {
    for (const applied of [true, false]) {
      const { patch } = settlement(op('pause', 'confirmed'), { applied, evidence: 'seen in the UI', providerReference: 'ref-9' });
      expect(patch).toMatchObject({ evidence: 'seen in the UI', provider_reference: 'ref-9' });
    }
    expect(settlement(op('pause', 'confirmed'), { applied: true, evidence: null }).patch).not.toHaveProperty('evidence');
  });

  test.each<[LineOperation, string, string]>([
    ['book', 'line.confirmed', 'line.rejected'],
    ['pause', 'line.paused', 'line.pause-refused'],
    ['resume', 'line.resumed', 'line.resume-refused'],
    ['stop', 'line.stopped', 'line.stop-refused'],
    ['change-budget', 'line.budget-changed', 'line.change-budget-refused'],
  ])('a %s is recorded as %s when applied and %s when refused', (kind, applied, refused) => {
    expect(outcomeAction(kind, true)).toBe(applied);
    expect(outcomeAction(kind, false)).toBe(refused);
  });
});
