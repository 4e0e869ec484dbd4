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
