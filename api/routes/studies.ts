import { z } from 'zod';
import {
  CreateStudySchema,
  DraftStudySchema,
  QuoteRequestSchema,
  StudyApprovalSchema,
  approveStudy,
  createStudy,
  draftStudy,
  quoteStudy,
  studyView,
} from '../../shared/studies/study-store';
import { StudyApprovalEnvelope, StudyEnvelope, StudyQuoteSchema } from '../../shared/studies/study-views';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { PathId } from '../http/params';

const StudyParams = z.strictObject({ studyId: PathId });

/** Brand lift studies: set up, quote, fund by explicit human approval, then draft (spec 9). */
export function studyRoutes({ db, config }: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/brand-lift-studies',
      operationId: 'createStudy',
      summary: 'Create a brand lift study, optionally for one of your campaigns.',
      tags: ['studies'],
      access: 'bearer',
      scope: 'request',
      body: CreateStudySchema,
      responses: { 201: { description: 'Created.', schema: StudyEnvelope }, 404: { description: 'No such campaign.' } },
      async handler({ principal, body }) {
        return { status: 201, body: await createStudy(db, principal, body, config.STUDY_REQUIRED_ARTIFACTS) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/brand-lift-studies/:studyId',
      operationId: 'getStudy',
      summary: 'A study with its quotes and approvals.',
      tags: ['studies'],
      access: 'bearer',
      scope: { resource: 'study', param: 'studyId' },
      params: StudyParams,
      responses: { 200: { description: 'The study.', schema: StudyEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        return { status: 200, body: await studyView(db, principal, params.studyId, config.STUDY_REQUIRED_ARTIFACTS) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/brand-lift-studies/:studyId/quotes',
      operationId: 'quoteStudy',
      summary: 'A quote from the research provider for a sample size (GBP minor units).',
      tags: ['studies'],
      access: 'bearer',
      scope: { resource: 'study', param: 'studyId' },
      params: StudyParams,
      body: QuoteRequestSchema,
      responses: { 201: { description: 'Quoted.', schema: z.object({ quote: StudyQuoteSchema }) }, 404: { description: 'Not found.' } },
      async handler({ principal, params, body }) {
        return { status: 201, body: await quoteStudy(db, principal, params.studyId, body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/brand-lift-studies/:studyId/approvals',
      operationId: 'approveStudy',
      summary: 'A human approves a quote and funds it: the full amount is reserved from the wallet.',
      tags: ['studies'],
      access: 'bearer',
      scope: { resource: 'study', param: 'studyId' },
      params: StudyParams,
      body: StudyApprovalSchema,
      responses: {
        201: { description: 'Approved and funded.', schema: StudyApprovalEnvelope },
        403: { description: 'Humans only.' },
        404: { description: 'Not found.' },
        409: { description: 'Unfunded.' },
      },
      async handler({ principal, params, body }) {
        return { status: 201, body: await approveStudy(db, principal, params.studyId, body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/brand-lift-studies/:studyId/draft',
      operationId: 'draftStudy',
      summary: 'Draft the study against an unused, funded human study approval. Idempotency-Key required; agent action study.draft.',
      tags: ['studies'],
      access: 'bearer',
      scope: { resource: 'study', param: 'studyId' },
      params: z.strictObject({ studyId: z.uuid() }),
      body: DraftStudySchema,
      idempotency: 'required',
      governedAction: 'study.draft',
      responses: {
        200: { description: 'Drafted.', schema: StudyEnvelope },
        404: { description: 'No such study, quote or approval.' },
        409: { description: 'Revision, approval, funding or idempotency conflict.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: await draftStudy(db, principal, params.studyId, body, config.STUDY_REQUIRED_ARTIFACTS) };
      },
    }),
  ];
}
