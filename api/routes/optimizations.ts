import { z } from 'zod';
import { acceptOptimization, listOptimizations, rejectOptimization } from '../../shared/optimizations/optimization-store';
import { AcceptedOptimizationEnvelope, OptimizationEnvelope, OptimizationSchema } from '../../shared/optimizations/optimization-views';
import type { ApiDeps } from '../deps';
import { IdParams } from '../http/params';
import { defineRoute } from '../http/route';

/** Optimization suggestions (list), their rejection (spec 22) and acceptance by a person. */
export function optimizationRoutes({ db, config }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/optimizations',
      operationId: 'listOptimizations',
      summary: 'Suggestions from bookings, outcomes and pixel data, each with its reason, figures and the exact plan amendment.',
      tags: ['optimizations'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'Suggestions, newest first.', schema: z.object({ optimizations: z.array(OptimizationSchema) }) },
        404: { description: 'No such campaign.' },
      },
      async handler({ principal, params }) {
        return {
          status: 200,
          body: await listOptimizations(db, principal, params.id, config.OPTIMIZATION_IDLE_DAYS, config.DELIVERY_PACING_TOLERANCE),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/optimizations/:id/reject',
      operationId: 'rejectOptimization',
      summary: 'Reject a suggestion. No body. Agent action optimization.reject (governed execution receipt).',
      tags: ['optimizations'],
      access: 'bearer',
      scope: { resource: 'optimization', param: 'id' },
      params: IdParams,
      governedAction: 'optimization.reject',
      completeness: 'unmodeled',
      responses: {
        200: { description: 'Rejected.', schema: OptimizationEnvelope },
        404: { description: 'Not found.' },
        409: { description: 'Already rejected, accepted or stale.' },
      },
      async handler({ principal, params }) {
        return {
          status: 200,
          body: await rejectOptimization(db, principal, params.id, config.OPTIMIZATION_IDLE_DAYS, config.DELIVERY_PACING_TOLERANCE),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/optimizations/:id/accept',
      operationId: 'acceptOptimization',
      summary: 'A person accepts a suggestion: its plan amendment is applied (the plan needs approving again). No body.',
      tags: ['optimizations'],
      access: 'bearer',
      scope: { resource: 'optimization', param: 'id' },
      params: IdParams,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'Accepted; the amended plan.', schema: AcceptedOptimizationEnvelope },
        403: { description: 'People only.' },
        404: { description: 'Not found.' },
        409: { description: 'Already rejected, accepted or stale.' },
      },
      async handler({ principal, params }) {
        return {
          status: 200,
          body: await acceptOptimization(db, principal, params.id, config.OPTIMIZATION_IDLE_DAYS, config.DELIVERY_PACING_TOLERANCE),
        };
      },
    }),
  ];
}
