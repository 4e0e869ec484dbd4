import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { rateLimited, unavailable, type Problem } from '../../shared/errors';
import type { RateLimiter, RateLimitRule } from '../../shared/ratelimit/rate-limiter';
import type { Logger } from '../../shared/logger';
import type { StaffCache } from '../../shared/staff/staff-cache';
import type { Config } from '../../shared/config/config';

const LIMITER_RETRY_AFTER_SECONDS = 5;

export interface RateLimitRules {
  default: RateLimitRule;
  /** Rules for particular routes, keyed `METHOD path`. */
  routes: Record<string, RateLimitRule>;
}

/** The service's rules: one bucket for persona extraction, the default for everything else. */
export function rateLimitRules(config: Pick<Config, 'RATE_LIMIT_WINDOW_MS' | 'RATE_LIMIT_MAX' | 'RATE_LIMIT_EXTRACT_MAX'>): RateLimitRules {
  const windowMs = config.RATE_LIMIT_WINDOW_MS;
  return {
    default: { bucket: 'default', limit: config.RATE_LIMIT_MAX, windowMs },
    routes: { 'POST /api/v1/personas/extract': { bucket: 'persona-extract', limit: config.RATE_LIMIT_EXTRACT_MAX, windowMs } },
  };
}

/**
 * Charges one more request to a particular route's own bucket, for a caller whose HTTP request
 * was charged elsewhere (an agent's tool call through /mcp runs a REST operation in process):
 * operations of the default bucket were already counted by the request itself.
 */
export async function chargeRoute(limiter: RateLimiter, rules: RateLimitRules, routeKey: string, clientKey: string): Promise<void> {
  const rule = rules.routes[routeKey];
  if (!rule) return;
  const r = await limiter.hit(rule, clientKey).catch(() => {
    throw unavailable('The rate limiter is unavailable. Retry shortly.', 'dependency_unavailable', LIMITER_RETRY_AFTER_SECONDS);
  });
  if (!r.allowed) throw rateLimited(r.resetSeconds);
}

/** What refused a request: the limit reached, or the limiter unreachable (`cause` says why). */
export interface Refusal {
  problem: Problem;
  cause?: unknown;
}

/**
 * Charges one request to its rule's bucket for a client and puts the rate-limit headers on the
 * response, whatever the outcome; null when the request may go on. The round trip also tells
 * the staff cache the staff version, before anything can look staff up.
 */
export async function chargeRequest(
  limiter: RateLimiter,
  rule: RateLimitRule,
  clientKey: string,
  staff: StaffCache,
  res: ServerResponse,
): Promise<Refusal | null> {
  try {
    const r = await limiter.hit(rule, clientKey);
    staff.observe(r.readAlong);
    res.setHeader('x-ratelimit-limit', String(r.limit));
    res.setHeader('x-ratelimit-remaining', String(r.remaining));
    res.setHeader('x-ratelimit-reset', String(r.resetSeconds));
    return r.allowed ? null : { problem: rateLimited(r.resetSeconds) };
  } catch (cause) {
    // Changes announced meanwhile could not be seen: trust nothing cached until Redis answers again.
    staff.observe(null);
    // Nothing was counted: every response still tells the client the limit, that it has nothing to spend now, and when to come back.
    res.setHeader('x-ratelimit-limit', String(rule.limit));
    res.setHeader('x-ratelimit-remaining', '0');
    res.setHeader('x-ratelimit-reset', String(LIMITER_RETRY_AFTER_SECONDS));
    return {
      problem: unavailable('The rate limiter is unavailable. Retry shortly.', 'dependency_unavailable', LIMITER_RETRY_AFTER_SECONDS),
      cause,
    };
  }
}

/** The rule a request is charged to: its route's own bucket, or the default. */
export const ruleFor = (rules: RateLimitRules, method: string, path: string): RateLimitRule =>
  rules.routes[`${method} ${path}`] ?? rules.default;

/**
 * Runs before anything else so that every response, errors and unknown routes
 * included, carries the headers. Keyed by client IP (express resolves it through
 * the configured trusted proxies).
 */
export function rateLimit(limiter: RateLimiter, rules: RateLimitRules, staff: StaffCache, logger: Logger) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const refused = await chargeRequest(limiter, ruleFor(rules, req.method, req.path), req.ip ?? 'unknown', staff, res);
    if (!refused) return next();
    if (refused.cause !== undefined) {
      // Readiness must still be able to say that Redis is down.
      if (req.path === '/readyz') return next();
      logger.error({ err: refused.cause, requestId: res.locals.requestId }, 'rate limiter unavailable');
    }
    return next(refused.problem);
  };
}
