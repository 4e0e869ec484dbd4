import { z } from 'zod';
import { Problem } from '../../shared/errors';
import { runReadinessChecks } from '../../shared/readiness/checks';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { sendProblem } from '../middleware/problem';

const Check = z.object({ ok: z.boolean(), detail: z.string(), durationMs: z.number() });
const Readiness = z
  .object({
    status: z.literal('ready'),
    checks: z.record(z.string(), Check),
    runtime: z.object({
      nodeEnv: z.string(),
      node: z.string(),
      executionModeDefault: z.enum(['sandbox', 'live']),
      authMode: z.enum(['jwks', 'development-issuer']),
      database: z.enum(['external', 'embedded']),
    }),
    billing: z.object({ mode: z.enum(['sandbox', 'live']) }),
  })
  .meta({ id: 'Readiness' });

/** Like every 503, not-ready says when to look again. */
const NOT_READY_RETRY = { 'retry-after': '5' };

export function readinessRoutes(deps: ApiDeps) {
  const { config, db, redis, redisPrefix, assets, runtime, logger } = deps;
  return [
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness of the database, Redis, adapter registry, credentials, evidence storage and workers.',
      tags: ['operations'],
      access: 'public',
      responses: {
        200: { description: 'Every required check passed.', schema: Readiness },
        503: { description: 'A required check failed; `failed` names it.' },
      },
      async handler({ res }) {
        const checks = await runReadinessChecks(
          { db, redis, redisPrefix, assets, executionModeDefault: config.EXECUTION_MODE_DEFAULT, heartbeatTtlMs: config.HEARTBEAT_TTL_MS },
          (check, err) => logger.warn({ check, err, requestId: res.locals.requestId }, 'readiness check failed'),
        );
        const report = {
          checks,
          runtime: {
            nodeEnv: config.NODE_ENV,
            node: process.version,
            executionModeDefault: config.EXECUTION_MODE_DEFAULT,
            authMode: runtime.authMode,
            database: runtime.database,
          },
          billing: { mode: config.BILLING_MODE },
        };
        res.setHeader('cache-control', 'no-store');
        const failed = Object.entries(checks)
          .filter(([, c]) => !c.ok)
          .map(([name]) => name);
        if (failed.length) {
          sendProblem(
            res,
            new Problem(503, 'not_ready', 'Not ready', `Failed check(s): ${failed.join(', ')}.`, 'transient', undefined, NOT_READY_RETRY),
            {
              failed,
              ...report,
            },
          );
          return;
        }
        return { status: 200, body: { status: 'ready', ...report } };
      },
    }),
  ];
}
