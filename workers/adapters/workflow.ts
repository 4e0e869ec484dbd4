import type { BookingOutcome, SupplierAdapter, WorkflowStep } from '../../shared/adapters/adapter';
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

/** Suppliers that staff book by hand or with a supervised browser: the line waits in the staff queue. */
export function workflowAdapter(descriptor: AdapterDescriptor): SupplierAdapter {
  const steps = descriptor.executionMethod === 'computer-use' ? COMPUTER_USE_STEPS : MANUAL_STEPS;
  return {
    descriptor,
    callsSupplier: false,
    async book(): Promise<BookingOutcome> {
      return { kind: 'workflow', steps };
    },
  };
}
