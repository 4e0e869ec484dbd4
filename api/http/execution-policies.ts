import { isUuid } from '../../shared/ids';
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import type { Knex } from 'knex';
import { Problem, badRequest } from '../../shared/errors';
import { beginGovernedExecution, finishGovernedExecution } from '../../shared/agent/execution';
import { callerId, type Principal } from '../../shared/auth/principal';
import { digestOf } from '../../shared/digest';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../../shared/idempotency/idempotency-store';
import { problemOf } from '../middleware/errors';
import type { HandlerResult } from './route';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../middleware/problem';

interface PolicyOptions {
  db: Knex;
}

/**
 * A result whose body is serialised once, here: the bytes sent are the bytes stored, so that
 * a replay can send them again exactly.
 */
function withJson(result: HandlerResult | void): HandlerResult {
  if (!result) throw new Error('governed and idempotent routes must return their result');
  if (result.json !== undefined || result.body === undefined) return result;
  return { ...result, json: JSON.stringify(result.body) };
}

/** A stored response as sent the first time: its exact bytes, and the body they say for callers in process (tools). */
function replayOf(status: number, json: string | null): HandlerResult {
  return {
    status,
    ...(json === null ? {} : { body: JSON.parse(json) as unknown, json }),
    ...(status >= 400 ? { contentType: PROBLEM_CONTENT_TYPE } : {}),
  };
}

/**
 * A delegated agent's call to a governed route: bound to the step a human approved, run at
 * most once, its outcome kept as the receipt that any replay gets back.
 */
export async function runGoverned(
  opts: PolicyOptions,
  action: string,
  principal: Principal,
  request: { params: unknown; body: unknown },
  headers: Request['headers'],
  requestId: string,
  run: () => Promise<HandlerResult | void>,
): Promise<HandlerResult> {
  const begun = await beginGovernedExecution(
    opts.db,
    principal,
    action,
    request as { params: Record<string, string>; body: unknown },
    headers,
  );
  if (begun.kind === 'replay') {
    return { ...replayOf(begun.status, begun.json), headers: { 'x-flightdeck-receipt': 'replayed' } };
  }
  try {
    const result = withJson(await run());
    await finishGovernedExecution(opts.db, principal, begun.stepId, { status: result.status, json: result.json ?? null });
    return result;
  } catch (err) {
    if (err instanceof Problem && err.status < 500) {
      await finishGovernedExecution(opts.db, principal, begun.stepId, {
        status: err.status,
        json: JSON.stringify(problemBody(err, requestId)),
      });
    } else {
      // A 500 or a crash mid-flight: the outcome is unknown, so the step never runs again.
      await finishGovernedExecution(opts.db, principal, begun.stepId, 'unknown').catch(() => undefined);
    }
    throw err;
  }
}

/** Idempotency policy `required`: the first response for a key is the response for that key. */
export async function runIdempotent(
  opts: PolicyOptions,
  route: string,
  principal: Principal,
  request: { params: unknown; query: unknown; body: unknown },
  req: IncomingMessage,
  requestId: string,
  invoke: () => Promise<HandlerResult | void>,
): Promise<HandlerResult> {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || !isUuid(key)) {
    throw badRequest(
      'Send an Idempotency-Key header (a uuid), and reuse it when retrying this request.',
      [{ path: 'headers.idempotency-key', message: 'a uuid is required' }],
      'idempotency_key_required',
    );
  }
  const claim = await claimIdempotencyKey(
    opts.db,
    { advertiserId: principal.advertiserId, callerId: callerId(principal), route },
    key.toLowerCase(),
    digestOf({ params: request.params ?? null, query: request.query ?? null, body: request.body ?? null }),
  );
  if (claim.kind === 'replay') {
    return { ...replayOf(claim.response.status, claim.response.json), headers: { 'idempotency-replayed': 'true' } };
  }
  try {
    const result = withJson(await invoke());
    await completeIdempotencyKey(opts.db, claim.recordId, { status: result.status, json: result.json ?? null });
    return result;
  } catch (err) {
    const problem = problemOf(err);
    // A 5xx or a 429 says "not now", not "no": the retry with this key must run, not replay it.
    const settle =
      problem.status >= 500 || problem.status === 429
        ? releaseIdempotencyKey(opts.db, claim.recordId)
        : completeIdempotencyKey(opts.db, claim.recordId, {
            status: problem.status,
            json: JSON.stringify(problemBody(problem, requestId)),
          });
    await settle.catch(() => undefined);
    throw err;
  }
}
