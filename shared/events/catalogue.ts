/**
 * The events a workspace can subscribe to, one catalogue. Each event carries its id, type, time,
 * workspace, subject (type, id, version) and a small body of ids and states: never personal
 * data, secrets or tokens.
 */
export const EVENT_TYPES = [
  {
    type: 'booking.line.status_changed',
    subject: 'booking_line',
    description: 'A booking line moved to another status (confirmed, rejected, reconciliation-required, paused, stopped, …).',
  },
  { type: 'booking.status_changed', subject: 'booking', description: "A booking's status changed as its lines moved." },
  { type: 'campaign.paused', subject: 'campaign', description: "A pause of the campaign's open booking was asked of its suppliers." },
  { type: 'campaign.resumed', subject: 'campaign', description: "A resume of the campaign's open booking was asked of its suppliers." },
  { type: 'campaign.stopped', subject: 'campaign', description: 'The campaign was stopped for good.' },
  { type: 'amendment.completed', subject: 'amendment', description: "A budget amendment settled: every line's change applied or refused." },
  {
    type: 'delivery.pacing_changed',
    subject: 'line_pacing',
    description:
      "A line's delivery pacing moved (on-track, under, over) with new delivery figures; the subject is the line, its version the line's pacing version.",
  },
  {
    type: 'delivery.outlook_changed',
    subject: 'line_outlook',
    description:
      "A running line's outlook moved (on-track, under-delivery, early-exhaustion, with the day exhaustion is expected) with new delivery figures; the subject is the line, its version the line's outlook version.",
  },
  {
    type: 'delivery.over_budget',
    subject: 'line_budget',
    description:
      "A line's delivered spend went past its budget (the supplier over-delivered); told once per line. The excess is recorded, never billed.",
  },
  {
    type: 'delivery.discrepancy',
    subject: 'delivery_discrepancy',
    description:
      'A seller (or staff) gave another figure for a day already final: both figures, the seller and the day are kept for a person; the final figure stands.',
  },
  {
    type: 'invoice.imported',
    subject: 'invoice',
    description: "A seller's invoice was imported and matched to the final delivery: its lines approved or disputed.",
  },
  {
    type: 'invoice.disputed',
    subject: 'invoice',
    description: "An imported invoice's lines differ from the final delivery beyond the seller's variance: disputed, with the evidence.",
  },
  {
    type: 'invoice.resolved',
    subject: 'invoice_line',
    description: 'A person resolved a disputed invoice line with a remedy (credit, invoice_adjustment, additional_delivery or accepted).',
  },
  {
    type: 'line.control_failed',
    subject: 'line_operation',
    description:
      'A pause, stop or budget or end-date change the supplier acknowledged is contradicted by what it said since (its read-back, or delivery after the change): the line goes to a person, with the evidence.',
  },
  { type: 'makegood.owed', subject: 'makegood', description: 'A seller owes a make-good: impressions to deliver at no cost by a date.' },
  {
    type: 'makegood.fulfilled',
    subject: 'makegood',
    description: "A make-good's impressions were delivered at no cost: the obligation is met.",
  },
  {
    type: 'makegood.expired',
    subject: 'makegood',
    description: 'A make-good reached its date unmet: a person must take it up with the seller.',
  },
  { type: 'agent.approval.pending', subject: 'agent_approval', description: 'A prepared agent action waits for a person to approve it.' },
  { type: 'agent.approval.decided', subject: 'agent_approval', description: 'A person approved or abandoned a prepared agent action.' },
  {
    type: 'agent.step.unknown',
    subject: 'agent_step',
    description: "An agent's executed step ended with an unknown outcome and needs a person to resolve it.",
  },
  {
    type: 'rule.fired',
    subject: 'rule_firing',
    description:
      "A workspace's automatic rule fired for a line or its campaign: notified (notify-only), executed under its mandate, awaiting a person's approval (outside its mandate), held by a guardrail, or failed; told once per firing.",
  },
  { type: 'funding.credited', subject: 'funding_request', description: "The workspace's wallet was credited by a funding request." },
  {
    type: 'creative.review.completed',
    subject: 'creative_review',
    description: "A supplier's review of a creative ended (approved or rejected).",
  },
  {
    type: 'browser_job.completed',
    subject: 'browser_job',
    description:
      "A supervised, read-only browser job on a supplier's site brought back its evidence (screenshot, visible text, final URL and status), bound to the line and its approved snapshot.",
  },
  {
    type: 'browser_job.failed',
    subject: 'browser_job',
    description:
      'A browser job ended without evidence: refused at start (its line changed), a limit reached, an address refused, a timeout or a crash. It is never retried.',
  },
] as const;

export type EventType = (typeof EVENT_TYPES)[number]['type'];
export type SubjectType = (typeof EVENT_TYPES)[number]['subject'];

export const EVENT_TYPE_NAMES = EVENT_TYPES.map((e) => e.type) as [EventType, ...EventType[]];

const SUBJECT_OF = new Map<string, SubjectType>(EVENT_TYPES.map((e) => [e.type, e.subject]));
export const subjectTypeOf = (type: EventType): SubjectType => SUBJECT_OF.get(type)!;
