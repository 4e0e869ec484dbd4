import { z } from 'zod';
import { unprocessable } from '../../shared/errors';
import { importOutcomes, outcomesView, OUTCOMES_BODY_LIMIT_BYTES } from '../../shared/measurement/outcomes';
import { ProveItSchema, listEvidence, proveIt, readEvidence } from '../../shared/measurement/prove-it';
import { RegisterGeoLiftDesignSchema, listDesigns, normalise, registerDesign } from '../../shared/measurement/geo-lift-designs';
import type { Refusal } from '../../shared/measurement/geo-lift';
import { RawBody } from '../../shared/measurement/raw-body';
import {
  GeoLiftDesignSchema,
  LiftEvidenceSchema,
  MarketsEnvelope,
  OutcomeBatchSchema,
  OutcomesEnvelope,
} from '../../shared/measurement/measurement-views';
import type { ApiDeps } from '../deps';
import { IdParams } from '../http/params';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../middleware/problem';
import { defineRoute } from '../http/route';

const Bytes = z
  .custom<Buffer>((v) => Buffer.isBuffer(v) && v.length > 0, 'send the outcome rows as the request body')
  .transform((b) => new RawBody(b));

// A refusal is an answer, not a failure: its figures travel in the problem body.
const refusalResult = (r: Refusal, requestId: string) => ({
  status: 422,
  contentType: PROBLEM_CONTENT_TYPE,
  body: problemBody(unprocessable(r.detail, r.code), requestId, { reason: r.reason, ...r.figures }),
});

const DesignEnvelope = z.object({ design: GeoLiftDesignSchema });

/** Outcomes import, geo-lift designs and evidence (spec 21) and the configured markets. */
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
      path: '/api/v1/campaigns/:id/geo-lift-designs',
      operationId: 'registerGeoLiftDesign',
      summary:
        'Register a geo-lift design before exposure: test market, controls, metric, exposure weeks, fit weeks, expected lift, α, power, sidedness. It is checked on the weeks before its fit window (correlation, Durbin–Watson, A/A test, power) and is immutable once registered; an identical repeat returns it. Refused when outcomes on or after the exposure start are already stored.',
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: RegisterGeoLiftDesignSchema,
      responses: {
        200: { description: 'This design was registered before, exactly so: it is returned as stored.', schema: DesignEnvelope },
        201: { description: 'Registered.', schema: DesignEnvelope },
        400: { description: 'Invalid body.' },
        404: { description: 'No such campaign.' },
        409: {
          description:
            'design_registered (the test is registered otherwise), design_overlaps, power_target_relaxed (a rosier expected lift, α, power or sidedness than already stated), exposure_data_present.',
        },
        422: {
          description:
            'Refused: underpowered (kept, as the answer to this test; designId in the body), insufficient_data or model_check_failed (nothing stored).',
        },
      },
      async handler({ principal, params, body, requestId }) {
        const r = await registerDesign(db, principal, params.id, normalise(body, config), config);
        if (r.kind === 'refused' || r.kind === 'underpowered') return refusalResult(r.refusal, requestId);
        return { status: r.kind === 'created' ? 201 : 200, body: { design: r.design } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/campaigns/:id/geo-lift-designs',
      operationId: 'listGeoLiftDesigns',
      summary: "The campaign's geo-lift designs, registered and refused as underpowered, newest first.",
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      responses: {
        200: { description: 'Designs.', schema: z.object({ designs: z.array(GeoLiftDesignSchema) }) },
        404: { description: 'No such campaign.' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: await listDesigns(db, principal, params.id) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/campaigns/:id/prove-it',
      operationId: 'proveIt',
      summary:
        'Evaluate causal lift against a registered geo-lift design (designId, or testMarket and exposureStart naming it; with none registered and no exposure data yet, the body registers it: 202). Weekly time-based regression. Before the registered end a look is interim and claims nothing; the final evaluation is made once (repeats return it, 200). Conclusion lift-detected, decline-detected or no-detectable-effect. Underpowered or thin designs are refused (422) with the minimum detectable lift.',
      tags: ['measurement'],
      access: 'bearer',
      scope: { resource: 'campaign', param: 'id' },
      params: IdParams,
      body: ProveItSchema,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'The final evaluation, made before: returned as stored.', schema: z.object({ evidence: LiftEvidenceSchema }) },
        201: {
          description: 'An interim look or the final evaluation, stored as evidence.',
          schema: z.object({ evidence: LiftEvidenceSchema }),
        },
        202: { description: 'The body registered its design; nothing is exposed yet to evaluate.', schema: DesignEnvelope },
        400: { description: 'Invalid body.' },
        404: { description: 'No such campaign or design.' },
        409: { description: 'design_mismatch (the body changes the registered design), or a registration conflict.' },
        422: { description: 'Refused: underpowered, insufficient_data or model_check_failed; nothing is stored.' },
      },
      async handler({ principal, params, body, requestId }) {
        const outcome = await proveIt(db, principal, params.id, body, config);
        if ('refused' in outcome) return refusalResult(outcome.refused, requestId);
        if ('registered' in outcome) return { status: 202, body: { design: outcome.registered } };
        return { status: outcome.replayed ? 200 : 201, body: { evidence: outcome.evidence } };
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
