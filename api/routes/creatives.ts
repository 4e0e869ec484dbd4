import { z } from 'zod';
import { actorOf } from '../../shared/auth/actor';
import {
  CreateCreativeSchema,
  CreativeDestinationSchema,
  CreativeEnvelope,
  CreativeReviewSchema,
  ReviseCreativeSchema,
  SubmitCreativeSchema,
} from '../../shared/creatives/creative-schemas';
import { createCreative, creativeView, reviseCreative } from '../../shared/creatives/creative-store';
import { reviewView, submitForReview } from '../../shared/creatives/creative-review';
import { relayAfterCommit } from '../../shared/outbox/outbox';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { IdParams } from '../http/params';

export function creativeRoutes(deps: ApiDeps) {
  const { db, logger } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/creatives',
      operationId: 'createCreative',
      summary: 'Create a creative over uploaded bytes: it records the fingerprint of exactly those bytes.',
      tags: ['creatives'],
      access: 'bearer',
      scope: 'request',
      body: CreateCreativeSchema,
      completeness: 'envelope-only',
      responses: {
        201: { description: 'Created.', schema: CreativeEnvelope },
        403: { description: 'A channel outside your product.' },
        404: { description: 'The asset or campaign is not yours.' },
        422: { description: 'The asset is not stored here, or does not suit the channel.' },
      },
      async handler({ principal, body }) {
        return { status: 201, body: await createCreative(db, principal, body, actorOf(principal).actorId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/creatives/:id',
      operationId: 'getCreative',
      summary: 'A creative at its current version, with every version, review and approval.',
      tags: ['creatives'],
      access: 'bearer',
      scope: { resource: 'creative', param: 'id' },
      params: IdParams,
      completeness: 'envelope-only',
      responses: { 200: { description: 'The creative.', schema: CreativeEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        return { status: 200, body: await creativeView(db, principal, params.id, { history: true }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/creatives/:id/revise',
      operationId: 'reviseCreative',
      summary: 'A new version with its own delivery metadata; approvals of earlier versions stop counting.',
      tags: ['creatives'],
      access: 'bearer',
      scope: { resource: 'creative', param: 'id' },
      params: IdParams,
      body: ReviseCreativeSchema,
      completeness: 'envelope-only',
      responses: { 200: { description: 'The new version.', schema: CreativeEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params, body }) {
        return { status: 200, body: await reviseCreative(db, principal, params.id, body, actorOf(principal).actorId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/creatives/:id/destination',
      operationId: 'setCreativeDestination',
      summary:
        "A new version that sends people to this URL (the clickthrough or landing page a seller's format asks for); approvals of earlier versions stop counting.",
      tags: ['creatives'],
      access: 'bearer',
      scope: { resource: 'creative', param: 'id' },
      params: IdParams,
      body: CreativeDestinationSchema,
      completeness: 'envelope-only',
      responses: { 200: { description: 'The new version.', schema: CreativeEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params, body }) {
        return { status: 200, body: await reviseCreative(db, principal, params.id, body, actorOf(principal).actorId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/creatives/:id/submit',
      operationId: 'submitCreative',
      summary: "Submit the current version's exact bytes to a supplier for review (queued). Agent action creative.submit.",
      tags: ['creatives'],
      access: 'bearer',
      scope: { resource: 'creative', param: 'id' },
      params: IdParams,
      body: SubmitCreativeSchema,
      governedAction: 'creative.submit',
      completeness: 'envelope-only',
      responses: {
        202: {
          description: 'Queued for review (or already under review for this version and supplier).',
          schema: z.object({ review: CreativeReviewSchema, creative: CreativeEnvelope.shape.creative }),
        },
        404: { description: 'Not found.' },
        409: { description: 'The last review of this version needs resolution.' },
        422: { description: 'The supplier does not review this channel, or needs approved access.' },
      },
      async handler({ principal, params, body, log }) {
        const { review, queued, creative } = await submitForReview(db, principal, params.id, body, actorOf(principal).actorId);
        const responseBody = { review: reviewView(review), creative };
        await relayAfterCommit(db, deps.producers.addAll, log ?? logger, { reviewId: review.id }, queued);
        return { status: 202, body: responseBody };
      },
    }),
  ];
}
