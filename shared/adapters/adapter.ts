import type { Knex } from 'knex';
import type { AdapterDescriptor } from './catalogue';

/** What a worker sends a supplier to book one line. `attemptId` is the supplier's idempotency key. */
export interface BookingRequest {
  attemptId: string;
  bookingId: string;
  lineId: string;
  channel: string;
  budgetMinor: number;
  executionMode: 'sandbox' | 'live';
  channelCampaignId: string;
  startDate: string;
  endDate: string;
  /** AdCP sellers: the seller's product and pricing option the approved plan line named. */
  supplierProduct: SupplierProduct | null;
  /** The line's daily spend cap (UTC days), when it has one: a supplier that caps natively holds each day to it. */
  dailyCapMinor?: number;
}

/** A seller's product and one of its pricing options, as a plan line on an AdCP seller names them. */
export interface SupplierProduct {
  productId: string;
  pricingOptionId: string;
}

export interface WorkflowStep {
  step: number;
  title: string;
  detail: string;
}

export type BookingOutcome =
  | { kind: 'confirmed'; providerReference: string }
  | { kind: 'rejected'; reason: string }
  /** A native staged supplier created the campaign paused; it stays stopped until it may be enabled. */
  | { kind: 'staged'; providerReference: string }
  /** A workflow supplier: staff carry the booking out by these steps. */
  | { kind: 'workflow'; steps: WorkflowStep[] }
  /**
   * The supplier accepted the request and is still working on it (an AdCP task `submitted` or
   * `working`): the line stays in progress under the supplier's task id until the task's final
   * outcome arrives (polled through `tasks`, or pushed by the supplier's webhook).
   */
  | { kind: 'pending'; taskId: string; supplierStatus: string };

/** The final word on a pending task, or that it is still pending. */
export type TaskOutcome = Exclude<BookingOutcome, { kind: 'staged' }>;

/** A supplier task a pending booking waits on. */
export interface PendingTask {
  taskId: string;
  attemptId: string;
  bookingId: string;
  lineId: string;
}

/** A supplier task a pending operation on a booked line waits on, with the request the supplier was sent. */
export interface PendingOperationTask extends PendingTask {
  kind: LineOperationKind;
  request: LineOperationRequest | BudgetChangeRequest;
}

/** The final word on an operation's pending task (applied or refused), or that it is still pending. */
export type OperationTaskOutcome = Exclude<LineOperationOutcome, { kind: 'workflow' }>;

/** Suppliers whose bookings and later operations may finish later: how to ask about a pending task. */
export interface TaskPoller {
  /** The task's outcome now; `pending` while the supplier still works on it. Throws when it cannot be asked. */
  poll(task: PendingTask, ctx: AdapterContext): Promise<TaskOutcome>;
  /** The same, for a pause, resume, stop or budget change the supplier answered `pending`. */
  pollOperation(task: PendingOperationTask, ctx: AdapterContext): Promise<OperationTaskOutcome>;
}

/** The supplier may or may not have acted (timeout, lost response, 5xx after send). Never retried blindly. */
export class UnknownOutcome extends Error {
  override readonly name = 'UnknownOutcome';
}

export interface AdapterContext {
  db: Knex;
  sandboxSlowMs: number;
  /** The supplier's "now": a sandbox booking's workspace test clock; real time when absent. */
  now?: Date;
  /** Aborted when the call's time is up: send nothing more (no resend, no wait). */
  signal?: AbortSignal;
  /** Aborted when a late answer is no longer waited for: cut the request in flight. */
  cut?: AbortSignal;
}

/** A booked line as its supplier knows it: what every operation after booking names. */
export interface LineAtSupplier {
  bookingId: string;
  lineId: string;
  channel: string;
  executionMode: 'sandbox' | 'live';
  channelCampaignId: string;
  /** The supplier's own reference from the booking; null when its answer was never known. */
  providerReference: string | null;
  /** The booking attempt's id: the idempotency key the supplier was booked with. */
  bookingAttemptId: string | null;
  budgetMinor: number;
  startDate: string;
  endDate: string;
  /**
   * The line's daily spend cap now (null: none), named where the supplier is asked about the line's
   * delivery; a supplier that caps natively holds each day from then on to it.
   */
  dailyCapMinor?: number | null;
}

/** The in-flight operations on a booked line, beside `book`. */
export type LineOperationKind = Exclude<SupplierOperationKind, 'book'>;
export const LINE_OPERATIONS = ['pause', 'resume', 'stop', 'change-budget'] as const satisfies readonly LineOperationKind[];

/** An operation on a booked line. `attemptId` is the supplier's idempotency key for it. */
export interface LineOperationRequest extends LineAtSupplier {
  attemptId: string;
}

/** A budget (and, where the supplier allows, end date) change: the line's new figures. */
export interface BudgetChangeRequest extends LineOperationRequest {
  newBudgetMinor: number;
  /** Only when the amendment moves the flight's end. */
  newEndDate?: string;
}

export type LineOperationOutcome =
  /** The supplier did it. */
  | { kind: 'applied'; providerReference?: string | null; detail?: Record<string, unknown> }
  /** The supplier definitely did not do it, and says why. */
  | { kind: 'refused'; reason: string }
  /** A workflow supplier: staff carry it out by these steps. */
  | { kind: 'workflow'; steps: WorkflowStep[] }
  /**
   * The supplier took the change and is still working on it (an AdCP task `submitted` or
   * `working`): the line stays in the operation's in-flight status until the task's final outcome
   * arrives, as a pending booking's does.
   */
  | { kind: 'pending'; taskId: string; supplierStatus: string };

/** One day of a line's delivery as the supplier reports it. */
export interface DeliveryDay {
  /** UTC date, YYYY-MM-DD. */
  date: string;
  impressions: number;
  clicks: number;
  /** Completed views or listens (video and audio); 0 where the channel has none. */
  completions: number;
  spendMinor: number;
  /**
   * The seller says this day's figures are final (AdCP: the package's `is_final`). A claim like
   * any other: a later figure for a final day is kept apart as a discrepancy, never applied.
   */
  final?: boolean;
}

export interface DeliveryReport {
  /** The supplier's own as-of time for these figures (ISO 8601). */
  asOf: string;
  days: DeliveryDay[];
}

/**
 * What each operation on a line sends its supplier and what the supplier may answer: `book`,
 * then the in-flight ones. One entry per operation kind, so a new kind makes the compiler name
 * every adapter (and every call site) that must learn it.
 */
export interface OperationContract {
  book: { request: BookingRequest; outcome: BookingOutcome };
  /** Stop the line spending for now; `resume` undoes it. */
  pause: { request: LineOperationRequest; outcome: LineOperationOutcome };
  /** Run a paused line again, or enable a staged one whose evidence now allows it. */
  resume: { request: LineOperationRequest; outcome: LineOperationOutcome };
  /** End the line for good: it will not run again. */
  stop: { request: LineOperationRequest; outcome: LineOperationOutcome };
  'change-budget': { request: BudgetChangeRequest; outcome: LineOperationOutcome };
}
export type SupplierOperationKind = keyof OperationContract;
export type RequestOf<K extends SupplierOperationKind> = OperationContract[K]['request'];
export type OutcomeOf<K extends SupplierOperationKind> = OperationContract[K]['outcome'];
/** An adapter's operations, typed per kind. */
export type SupplierOperations = { [K in SupplierOperationKind]: (request: RequestOf<K>, ctx: AdapterContext) => Promise<OutcomeOf<K>> };
/** Its in-flight operations alone (everything but `book`). */
export type InFlightOperations = Omit<SupplierOperations, 'book'>;

export interface SupplierAdapter {
  descriptor: AdapterDescriptor;
  /** Workflow adapters return steps without calling anyone, so no attempt is opened for them. */
  readonly callsSupplier: boolean;
  operations: SupplierOperations;
  /** Suppliers that review creatives before they run; workflow suppliers do not. */
  reviewer?: CreativeReviewer;
  /** Suppliers that report delivery themselves; workflow suppliers' delivery is entered by staff. */
  reporter?: DeliveryReporter;
  /** Suppliers whose bookings may answer `pending`. */
  tasks?: TaskPoller;
}

export interface DeliveryReporter {
  /**
   * What the line delivered on each day from `fromDate` to `toDate` (inclusive, UTC), as the
   * supplier reports it now; days it has no figures for yet are absent. Throws when the supplier
   * cannot be asked: the figures then wait, they are never invented.
   */
  delivery(line: LineAtSupplier, fromDate: string, toDate: string, ctx: AdapterContext): Promise<DeliveryReport>;
}

/** What a worker sends a supplier for creative review: the exact bytes and the metadata being approved. */
/** The words of the creative version under review, as approved with it (its metadata digest covers them). */
export interface CreativeCopy {
  copyText: string;
  headline?: string;
  subline?: string;
  cta?: string;
  mandatories?: string[];
  /** Where the creative sends people (its clickthrough or landing page), if it has a destination. */
  destinationUrl?: string;
  /** An audio spot's delivery words, and where its listeners are sent. */
  audio?: { tagline: string; callToAction: string; destinationUrl: string };
}

export interface ReviewRequest {
  attemptId: string;
  reviewId: string;
  creativeId: string;
  version: number;
  name: string;
  channel: string;
  format: string;
  bytes: Buffer;
  /** The stored asset's content-addressed name (served, immutable, at /files/assets/<name>). */
  assetName: string;
  contentType: string;
  assetFingerprint: string;
  metadataDigest: string;
  copy: CreativeCopy;
}

export type ReviewOutcome =
  | { kind: 'approved'; providerReference: string }
  | { kind: 'rejected'; reasons: string[]; providerReference: string | null }
  /** The supplier holds the creative and decides later (its own review): it is asked again on a schedule. */
  | { kind: 'pending'; providerReference: string; supplierStatus: string };

/** A review the supplier holds, as it is asked about again. */
export interface ReviewAtSupplier {
  reviewId: string;
  creativeId: string;
  version: number;
  advertiserId: string;
  /** The supplier's id of the creative, from its first answer. */
  providerReference: string;
}

export interface CreativeReviewer {
  review(request: ReviewRequest, ctx: AdapterContext): Promise<ReviewOutcome>;
  /** Suppliers whose review may answer `pending`: its verdict now (`pending` while still undecided). Throws when it cannot be asked. */
  check?(review: ReviewAtSupplier, ctx: AdapterContext): Promise<ReviewOutcome>;
}
