import type { TaskResult } from '@adcp/sdk';
import type { OperationTaskOutcome, TaskOutcome, WorkflowStep } from '../adapter';
import type { AdcpCapabilities } from './connection';

/**
 * How an AdCP answer to create_media_buy (or a tasks/get of its task) becomes a booking outcome.
 * One buy per line: each line is its own media buy with one package, sent with the line's
 * attempt id as its idempotency_key, so a line's answer never depends on another line's.
 */

/** A line's provider reference on an AdCP seller: the media buy and its package. */
export const adcpReference = (mediaBuyId: string, packageId: string | null) => (packageId ? `${mediaBuyId}/${packageId}` : mediaBuyId);

export function parseAdcpReference(reference: string): { mediaBuyId: string; packageId: string | null } {
  const slash = reference.indexOf('/');
  return slash < 0
    ? { mediaBuyId: reference, packageId: null }
    : { mediaBuyId: reference.slice(0, slash), packageId: reference.slice(slash + 1) };
}

interface BuyResult {
  media_buy_id?: string;
  packages?: Array<{ package_id?: string }>;
  errors?: Array<{ code?: string; message?: string }>;
}

/** A completed create_media_buy: the buy and its package, or the seller's errors (a definite refusal). */
export function completedBuy(data: unknown): TaskOutcome {
  const buy = (data ?? {}) as BuyResult;
  if (buy.media_buy_id) {
    return { kind: 'confirmed', providerReference: adcpReference(buy.media_buy_id, buy.packages?.[0]?.package_id ?? null) };
  }
  const reason = buy.errors?.map((e) => [e.code, e.message].filter(Boolean).join(': ')).join('; ');
  return { kind: 'rejected', reason: `The seller refused the media buy${reason ? `: ${reason}` : '.'}` };
}

/** The seller needs a person: staff take the line in the fulfilment queue. */
export function inputRequiredSteps(message: string | undefined, taskId: string | undefined): WorkflowStep[] {
  return [
    {
      step: 1,
      title: 'Answer the seller',
      detail: `The seller needs input before it books this line${taskId ? ` (task ${taskId})` : ''}: ${message ?? 'no detail given'}.`,
    },
    {
      step: 2,
      title: 'Record the outcome',
      detail: "Confirm the line with the seller's media buy id, or reject it with the seller's reason.",
    },
  ];
}

/** What to do with an answer: an outcome, or send the same request again with the same key. */
export type AnswerVerdict<O = TaskOutcome> =
  | { kind: 'outcome'; outcome: O }
  /** The seller said it did nothing for now: resend; if resending is over, its answer is a refusal. */
  | { kind: 'resend'; why: string; refusal: O | null }
  | { kind: 'unknown'; why: string };

/** Error codes by which the seller says it did nothing and the same request may come again. */
const RESEND_CODES = new Set(['IDEMPOTENCY_IN_FLIGHT', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE']);

/** The verdict on a failed answer to a change (create_media_buy, update_media_buy); `refuse` words the tool's refusal. */
export function failedVerdict<O>(result: TaskResult<unknown>, refuse: (reason: string) => O): AnswerVerdict<O> {
  const code = result.adcpError?.code;
  // A transport failure carries no AdCP error: the seller may or may not have acted.
  if (!code) return { kind: 'unknown', why: `The seller's answer was lost: ${result.error}` };
  const refusal = refuse(`${code}: ${result.adcpError?.message ?? result.error}`);
  // Still running under this key: the outcome is the first request's, unknown until a resend replays it.
  if (code === 'IDEMPOTENCY_IN_FLIGHT') return { kind: 'resend', why: code, refusal: null };
  if (RESEND_CODES.has(code) || result.adcpError?.recovery === 'transient') return { kind: 'resend', why: code, refusal };
  // Our own key reused with another body: never expected (bodies are built from the attempt). A person looks.
  if (code === 'IDEMPOTENCY_CONFLICT') return { kind: 'unknown', why: 'The seller holds another request under this attempt id.' };
  return { kind: 'outcome', outcome: refusal };
}

/** The verdict on one create_media_buy answer. */
export function verdictOf(result: TaskResult<unknown>): AnswerVerdict {
  switch (result.status) {
    case 'completed':
      return { kind: 'outcome', outcome: completedBuy(result.data) };
    case 'submitted':
    case 'working': {
      const taskId = result.submitted?.taskId ?? (result.data as { task_id?: string } | undefined)?.task_id;
      if (!taskId) return { kind: 'unknown', why: `The seller answered ${result.status} without a task id.` };
      return { kind: 'outcome', outcome: { kind: 'pending', taskId, supplierStatus: result.status } };
    }
    case 'input-required':
      return {
        kind: 'outcome',
        outcome: {
          kind: 'workflow',
          steps: inputRequiredSteps(result.metadata.inputRequest?.question, result.metadata.serverTaskId ?? result.metadata.taskId),
        },
      };
    case 'failed':
      return failedVerdict(result, (reason): TaskOutcome => ({ kind: 'rejected', reason }));
    default:
      return { kind: 'unknown', why: `The seller answered ${result.status}.` };
  }
}

/** The verdict on a tasks/get answer about a pending booking. */
export function taskVerdict(info: TaskReport): TaskOutcome | null {
  switch (info.status) {
    case 'submitted':
    case 'working':
      return { kind: 'pending', taskId: info.taskId, supplierStatus: info.status };
    case 'completed':
      return completedBuy(info.result);
    case 'failed':
    case 'rejected':
    case 'canceled':
      return { kind: 'rejected', reason: `The seller's task ${info.status}: ${info.error ?? info.message ?? 'no reason given'}` };
    case 'input-required':
      return { kind: 'workflow', steps: inputRequiredSteps(info.message, info.taskId) };
    default:
      // `unknown`, or anything else: the seller itself does not know; a person reconciles.
      return null;
  }
}

/** A task's status and what it carries, as tasks/get or the seller's webhook tells it. */
export interface TaskReport {
  status: string;
  result?: unknown;
  error?: string;
  message?: string;
  taskId: string;
}

/** The seller's errors in an update_media_buy result, as a refusal's reason; null when it has none. */
export function updateErrors(data: unknown): string | null {
  const errors = (data as { errors?: Array<{ code?: string; message?: string }> } | null | undefined)?.errors;
  return errors?.length ? errors.map((e) => `${e.code}: ${e.message}`).join('; ') : null;
}

/**
 * The verdict on a tasks/get answer (or webhook) about a pending update_media_buy: its result's
 * errors refuse it, a result without them applies it (the caller reads the buy back), a task that
 * failed refuses it. Null when the seller itself does not know, or asks for input: a person reconciles.
 */
export function updateTaskVerdict(info: TaskReport): OperationTaskOutcome | null {
  switch (info.status) {
    case 'submitted':
    case 'working':
      return { kind: 'pending', taskId: info.taskId, supplierStatus: info.status };
    case 'completed': {
      const errors = updateErrors(info.result);
      return errors ? { kind: 'refused', reason: errors } : { kind: 'applied' };
    }
    case 'failed':
    case 'rejected':
    case 'canceled':
      return { kind: 'refused', reason: `The seller's task ${info.status}: ${info.error ?? info.message ?? 'no reason given'}` };
    default:
      return null;
  }
}

/**
 * When sending the same change (create_media_buy, update_media_buy) again, with the same
 * idempotency_key and the same body, is safe (docs/adcp.md, "Resending"): the seller declares
 * idempotency supported, and the first send is younger than its declared replay window, less a minute's margin for clocks. Inside the
 * window the seller answers a resend with the first request's result (or IDEMPOTENCY_IN_FLIGHT
 * while it still runs), so a resend can never act twice. Outside it, or without a declaration,
 * nothing is resent: the line goes to reconciliation. A new key is never used for the same line.
 */
export function resendAllowed(caps: AdcpCapabilities | null, firstSentAt: number, now = Date.now()): boolean {
  if (!caps?.idempotency.supported || caps.idempotency.replayTtlSeconds === null) return false;
  return now - firstSentAt < (caps.idempotency.replayTtlSeconds - 60) * 1000;
}
