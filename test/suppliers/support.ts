import { refreshStagedLines } from '../../shared/bookings/staged-lines';
import path from 'node:path';
import type { BookingOutcome, LineOperationOutcome, SupplierAdapter } from '../../shared/adapters/adapter';
import { findAdapter } from '../../shared/adapters/catalogue';
import { createLogger } from '../../shared/logger';
import type { TestEnv } from '../support/api';

/**
 * A supplier whose answer the test gives by hand: it records that the call arrived, then
 * answers only when told. Stands in for a supplier's remote API, nothing of ours.
 */
export function heldSupplier<O>() {
  let arrived!: () => void;
  let answer!: (o: O) => void;
  const received = new Promise<void>((r) => (arrived = r));
  const outcome = new Promise<O>((r) => (answer = r));
  const requests: unknown[] = [];
  return {
    received,
    answer,
    /** What each call asked, in order. */
    requests,
    get calls() {
      return requests.length;
    },
    call(request?: unknown): Promise<O> {
      requests.push(request);
      arrived();
      return outcome;
    },
  };
}

export type Held<O> = ReturnType<typeof heldSupplier<O>>;

/** A supplier that books through `held`, and whose in-flight operations answer through `ops` (never called unless given). */
export function heldAdapter(held: Held<BookingOutcome>, key = 'sandbox-ctv', ops?: Held<LineOperationOutcome>): SupplierAdapter {
  const op = (request: unknown) => {
    if (!ops) throw new Error('this held supplier takes no in-flight operations');
    return ops.call(request);
  };
  return {
    descriptor: findAdapter(key)!,
    callsSupplier: true,
    operations: { book: (request) => held.call(request), pause: op, resume: op, stop: op, 'change-budget': op },
  };
}

export const engineOptions = (env: TestEnv) => ({
  timeoutMs: 60_000,
  context: { db: env.db, sandboxSlowMs: 0 },
  logger: createLogger('silent'),
  assetDir: path.join(env.dataDir, 'assets'),
  afterApproval: refreshStagedLines,
});

/** A random pause of up to `ms`, so that two racing requests arrive in either order. */
export const jitter = (ms: number) => new Promise((r) => setTimeout(r, Math.floor(Math.random() * ms)));
