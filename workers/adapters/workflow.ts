import type { BookingOutcome, LineOperationOutcome, SupplierAdapter, WorkflowStep } from '../../shared/adapters/adapter';
import type { AdapterDescriptor } from '../../shared/adapters/catalogue';

const MANUAL_STEPS: WorkflowStep[] = [
  { step: 1, title: 'Claim the line', detail: 'Claim it so the client knows who is booking it.' },
  { step: 2, title: 'Send the insertion order', detail: "Send the approved line (channel, flight, budget) to the supplier's sales desk." },
  { step: 3, title: 'Start the booking', detail: 'Mark the line started once the supplier has the order.' },
  {
    step: 4,
    title: 'Record the outcome',
    detail: "Confirm with the supplier's booking reference and evidence, or reject with the reason.",
  },
];

const COMPUTER_USE_STEPS: WorkflowStep[] = [
  { step: 1, title: 'Claim the line', detail: 'Only the assigned operator may prepare or execute it.' },
  { step: 2, title: 'Observe', detail: "Record a read-only browser job against the supplier's official public sources." },
  { step: 3, title: 'Start the booking', detail: 'Mark the line started; this opens the managed-booking attempt.' },
  { step: 4, title: 'Prepare', detail: 'Record a prepare browser job for the started attempt; nothing is purchased automatically.' },
  { step: 5, title: 'Record the outcome', detail: "Confirm with the supplier's reference and evidence, or reject with the reason." },
];

/** The steps staff take to carry out a change to a running line (pause, resume, stop, budget). */
function changeSteps(what: string): WorkflowStep[] {
  return [
    { step: 1, title: 'Claim the line', detail: 'Claim it so the client knows who is handling the change.' },
    { step: 2, title: 'Ask the supplier', detail: `Ask the supplier's desk to ${what}, quoting the supplier's booking reference.` },
    { step: 3, title: 'Start', detail: 'Mark the change started once the supplier has the request.' },
    {
      step: 4,
      title: 'Record the outcome',
      detail: 'Confirm once the supplier has done it, with evidence, or record its refusal with the reason.',
    },
  ];
}

/** Suppliers that staff book by hand or with a supervised browser: the line waits in the staff queue. */
export function workflowAdapter(descriptor: AdapterDescriptor): SupplierAdapter {
  const steps = descriptor.executionMethod === 'computer-use' ? COMPUTER_USE_STEPS : MANUAL_STEPS;
  const byStaff = (what: string) => async (): Promise<LineOperationOutcome> => ({ kind: 'workflow', steps: changeSteps(what) });
  return {
    descriptor,
    callsSupplier: false,
    operations: {
      book: async (): Promise<BookingOutcome> => ({ kind: 'workflow', steps }),
      pause: byStaff('pause the line'),
      resume: byStaff('run the line again'),
      stop: byStaff('end the line for good'),
      'change-budget': byStaff("change the line's budget (and end date, where asked)"),
    },
  };
}
