import type { ServerResponse } from 'node:http';
import type { Response } from 'express';
import type { Problem } from '../../shared/errors';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 body. No `instance`: a cross-tenant 404 must read exactly like a 404 for an id that never existed. */
export function problemBody(p: Problem, requestId: string, extensions: Record<string, unknown> = {}) {
  return {
    type: `https://flightdeck.dev/problems/${p.code.replace(/_/g, '-')}`,
    title: p.title,
    status: p.status,
    detail: p.detail,
    code: p.code,
    recovery: p.recovery,
    requestId,
    ...(p.errors ? { errors: p.errors } : {}),
    ...extensions,
  };
}

/** Answers with a problem: its status, its headers (retry-after, www-authenticate) and its body. */
export function writeProblem(res: ServerResponse, p: Problem, requestId: string, extensions: Record<string, unknown> = {}): void {
  for (const [k, v] of Object.entries(p.headers ?? {})) res.setHeader(k, v);
  const body = JSON.stringify(problemBody(p, requestId, extensions));
  res.statusCode = p.status;
  res.setHeader('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

export function sendProblem(res: Response, p: Problem, extensions: Record<string, unknown> = {}): void {
  writeProblem(res, p, String(res.locals.requestId ?? ''), extensions);
}
