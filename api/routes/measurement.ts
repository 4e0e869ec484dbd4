import { z } from 'zod';
import { unprocessable } from '../../shared/errors';
import { importOutcomes, outcomesView, OUTCOMES_BODY_LIMIT_BYTES } from '../../shared/measurement/outcomes';
import { ProveItSchema, listEvidence, proveIt, readEvidence } from '../../shared/measurement/prove-it';
import { RawBody } from '../../shared/measurement/raw-body';
import { LiftEvidenceSchema, MarketsEnvelope, OutcomeBatchSchema, OutcomesEnvelope } from '../../shared/measurement/measurement-views';
import type { ApiDeps } from '../deps';
import { IdParams } from '../http/params';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../http/problem';
import { defineRoute } from '../http/route';

const Bytes = z
  .custom<Buffer>((v) => Buffer.isBuffer(v) && v.length > 0, 'send the outcome rows as the request body')
  .transform((b) => new RawBody(b));

/** Outcomes import, geo-lift evidence (spec 21) and the configured markets. */
export function measurementRoutes({ db, config }: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/measurement/markets',
      operationId: 'listMarkets',
      summary: 'The geo markets that outcomes and geo-lift designs name.',
      tags: ['measurement'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The configured markets.', schema: MarketsEnvelope } },
      async handler() {
        return { status: 200, body: { markets: config.GEO_MARKETS } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/outcomes',
      operationId: 'importOutcomes',
      summary:
        'Import daily outcome rows { date, market, metric, value } as JSON { rows } or text/csv (1..10000 rows). All or nothing; a later row for the same day, market and metric replaces the earlier one. Idempotency-Key required; agent action outcomes.import.',
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: Bytes,
      rawBody: true,
      bodyLimitBytes: OUTCOMES_BODY_LIMIT_BYTES,
      idempotency: 'required',
      governedAction: 'outcomes.import',
      responses: {
        201: { description: 'Imported as one audited batch.', schema: z.object({ batch: OutcomeBatchSchema }) },
        400: { description: 'Bad rows, each listed with its row number; nothing was imported.' },
        404: { description: 'No such campaign.' },
        409: { description: 'Idempotency or execution conflict.' },
        413: { description: 'Body too large.' },
      },
      async handler({ principal, params, body, headers }) {
        return { status: 201, body: await importOutcomes(db, principal, params.id, body, headers['content-type'], config.GEO_MARKETS) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/outcomes',
      operationId: 'listOutcomeBatches',
      summary: "The campaign's outcome import batches and what is stored per metric.",
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      responses: { 200: { description: 'Batches and totals.', schema: OutcomesEnvelope }, 404: { description: 'No such campaign.' } },
      async handler({ principal, params }) {
        return { status: 200, body: await outcomesView(db, principal, params.id) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/prove-it',
      operationId: 'proveIt',
      summary:
        'Evaluate causal lift in the test market by time-based regression. Underpowered or thin designs are refused (422) with the minimum detectable effect and what would power them.',
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: ProveItSchema,
      completeness: 'unmodeled',
      responses: {
        201: { description: 'The lift estimate, stored as evidence.', schema: z.object({ evidence: LiftEvidenceSchema }) },
        404: { description: 'No such campaign.' },
        422: { description: 'Refused: underpowered or insufficient_data.' },
      },
      async handler({ principal, params, body, requestId }) {
        const outcome = await proveIt(db, principal, params.id, body, config);
        if ('evidence' in outcome) return { status: 201, body: { evidence: outcome.evidence } };
        const { code, reason, detail, figures } = outcome.refused;
        // A refusal is an answer, not a failure: its figures travel in the problem body.
        return {
          status: 422,
          contentType: PROBLEM_CONTENT_TYPE,
          body: problemBody(unprocessable(detail, code), requestId, { reason, ...figures }),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/lift-evidence',
      operationId: 'listLiftEvidence',
      summary: "The campaign's stored geo-lift evidence, newest first.",
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'Evidence.', schema: z.object({ evidence: z.array(LiftEvidenceSchema) }) },
        404: { description: 'No such campaign.' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: await listEvidence(db, principal, params.id) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/lift-evidence/:id',
      operationId: 'getLiftEvidence',
      summary: 'One stored geo-lift evaluation.',
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'lift-evidence', param: 'id' },
      params: IdParams,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'Evidence.', schema: z.object({ evidence: LiftEvidenceSchema }) },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: await readEvidence(db, principal, params.id) };
      },
    }),
  ];
}
