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
  | { kind: 'workflow'; steps: WorkflowStep[] };

/** The supplier may or may not have acted (timeout, lost response, 5xx after send). Never retried blindly. */
export class UnknownOutcome extends Error {
  override readonly name = 'UnknownOutcome';
}

export interface AdapterContext {
  db: Knex;
  sandboxSlowMs: number;
}

export interface SupplierAdapter {
  descriptor: AdapterDescriptor;
  /** Workflow adapters return steps without calling anyone, so no attempt is opened for them. */
  readonly callsSupplier: boolean;
  book(request: BookingRequest, ctx: AdapterContext): Promise<BookingOutcome>;
  /** Suppliers that review creatives before they run; workflow suppliers do not. */
  reviewer?: CreativeReviewer;
}

/** What a worker sends a supplier for creative review: the exact bytes and the metadata being approved. */
export interface ReviewRequest {
  attemptId: string;
  reviewId: string;
  creativeId: string;
  version: number;
  name: string;
  channel: string;
  format: string;
  bytes: Buffer;
  assetFingerprint: string;
  metadataDigest: string;
}

export type ReviewOutcome =
  { kind: 'approved'; providerReference: string } | { kind: 'rejected'; reasons: string[]; providerReference: string | null };

export interface CreativeReviewer {
  review(request: ReviewRequest, ctx: AdapterContext): Promise<ReviewOutcome>;
}
