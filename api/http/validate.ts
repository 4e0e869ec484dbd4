import type { ZodError, ZodType } from 'zod';
import { badRequest, type ProblemIssue } from '../../shared/errors';

export function issuesOf(error: ZodError, location: string): ProblemIssue[] {
  return error.issues.map((i) => ({
    path: [location, ...i.path.map(String)].join('.'),
    message: i.message,
    code: i.code,
  }));
}

/** Parses one part of a request; any issue is a 400 naming where it was. */
export function parsePart<T extends ZodType>(schema: T, value: unknown, location: 'params' | 'query' | 'body' | 'headers') {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issues = issuesOf(result.error, location);
    throw badRequest(`The request ${location} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  return result.data;
}

type Location = 'params' | 'query' | 'body' | 'headers';
export type PartResult<T = unknown> = { ok: true; data: T } | { ok: false; issues: ProblemIssue[] };

/** Parses one part of a request without throwing: its value, or its issues named by where they are. */
export function checkPart(schema: ZodType | undefined, value: unknown, location: Location, absent: unknown = {}): PartResult {
  if (!schema) return { ok: true, data: absent };
  const result = schema.safeParse(value);
  return result.success ? { ok: true, data: result.data } : { ok: false, issues: issuesOf(result.error, location) };
}

/**
 * The parts of a request, parsed together: every issue of every part in one 400, so that a
 * caller (often an agent) corrects everything at once rather than one layer at a time.
 */
export function requireParts<T extends PartResult[]>(...parts: T): { [K in keyof T]: unknown } {
  const issues = parts.flatMap((p) => (p.ok ? [] : p.issues));
  if (issues.length) {
    throw badRequest(`The request is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  return parts.map((p) => (p as { data: unknown }).data) as { [K in keyof T]: unknown };
}

/** Deeper than any body of ours; far below what recursive code (zod, digests, logs) can walk. */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests arrays or objects deeper than `max`, found without recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
