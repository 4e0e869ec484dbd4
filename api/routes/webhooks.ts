import { z } from 'zod';
import { secretBoxOf } from '../../shared/crypto/secret-box';
import { assertHuman } from '../../shared/auth/guards';
import type { Principal } from '../../shared/auth/principal';
import { CHANNELS } from '../../shared/auth/products';
import { requireEntitled } from '../../shared/auth/scope';
import { EVENT_TYPES } from '../../shared/events/catalogue';
import { WEBHOOKS_QUEUE } from '../../shared/queues/names';
import { wakeDeliveries } from '../../shared/webhooks/delivery-engine';
import { listDeliveries, redeliver } from '../../shared/webhooks/deliveries';
import { webhookUrlPolicy } from '../../shared/webhooks/policy';
import {
  CreateSubscriptionSchema,
  DeliveriesQuerySchema,
  DeliverySchema,
  EventTypeViewSchema,
  SubscriptionSchema,
  SubscriptionWithSecretSchema,
  UpdateSubscriptionSchema,
} from '../../shared/webhooks/subscription-schemas';
import {
  createSubscription,
  deleteSubscription,
  findSubscription,
  listSubscriptions,
  rotateSecret,
  subscriptionView,
  updateSubscription,
} from '../../shared/webhooks/subscription-store';
import type { ApiDeps } from '../deps';
import { IdParams, PathId, uuidOr404 } from '../http/params';
import { defineRoute, type RouteDef } from '../http/route';

const BASE = '/api/v1/webhooks/subscriptions';
const DeliveryParams = z.strictObject({ id: PathId, deliveryId: PathId });

/**
 * A subscription receives every event of its types in the whole workspace, on every channel. So
 * subscriptions are managed by people (delegated agents: 403 human_required) whose product covers
 * every channel (narrower products: 403 channel_not_entitled).
 */
async function mayManage(principal: Principal): Promise<void> {
  assertHuman(principal, 'manage webhook subscriptions');
  requireEntitled(principal, CHANNELS);
}

const manages = {
  403: { description: 'Delegated agents cannot manage webhooks (humans only), nor can products that do not cover every channel.' },
};

/** Outbound webhooks: the event catalogue, subscriptions, and their deliveries. */
export function webhookRoutes(deps: ApiDeps): RouteDef[] {
  const { db, config } = deps;
  const policy = webhookUrlPolicy(config);
  const secrets = secretBoxOf(config);
  const wake = (id: string) => wakeDeliveries(deps.producers.get(WEBHOOKS_QUEUE), [{ id, attempts: 0 }]);

  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/webhooks/event-types',
      operationId: 'listWebhookEventTypes',
      summary: 'The events a webhook subscription can ask for, with the subject each is about.',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The catalogue.', schema: z.object({ eventTypes: z.array(EventTypeViewSchema) }) } },
      async handler() {
        return { status: 200, body: { eventTypes: EVENT_TYPES.map((e) => ({ ...e })) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: BASE,
      operationId: 'createWebhookSubscription',
      summary: 'Subscribe an https URL to event types. The signing secret (Standard Webhooks, whsec_…) is in this response only: keep it.',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      body: CreateSubscriptionSchema,
      responses: {
        201: { description: 'Subscribed; the secret is shown this once.', schema: SubscriptionWithSecretSchema },
        400: { description: 'A bad body, or a URL refused (not https, a private, loopback or link-local address).' },
        ...manages,
      },
      async handler({ principal, body }) {
        return { status: 201, body: await createSubscription(db, principal.advertiserId, principal.userId, body, policy, secrets) };
      },
    }),
    defineRoute({
      method: 'get',
      path: BASE,
      operationId: 'listWebhookSubscriptions',
      summary: "The workspace's webhook subscriptions, newest first, each with whether it is failing.",
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      responses: { 200: { description: 'Subscriptions.', schema: z.object({ subscriptions: z.array(SubscriptionSchema) }) }, ...manages },
      async handler({ principal }) {
        return { status: 200, body: { subscriptions: await listSubscriptions(db, principal.advertiserId) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${BASE}/:id`,
      operationId: 'getWebhookSubscription',
      summary: 'One webhook subscription (never its secret).',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      params: IdParams,
      responses: {
        200: { description: 'The subscription.', schema: z.object({ subscription: SubscriptionSchema }) },
        ...manages,
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        const row = await findSubscription(db, principal.advertiserId, uuidOr404(params.id));
        return { status: 200, body: { subscription: subscriptionView(row) } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: `${BASE}/:id`,
      operationId: 'updateWebhookSubscription',
      summary: 'Change the URL, event types, description, or pause it (enabled: false keeps its events waiting).',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      params: IdParams,
      body: UpdateSubscriptionSchema,
      responses: {
        200: { description: 'Changed.', schema: z.object({ subscription: SubscriptionSchema }) },
        400: { description: 'A bad body or a refused URL.' },
        ...manages,
        404: { description: 'Not found.' },
        409: { description: 'A stale expectedVersion.' },
      },
      async handler({ principal, params, body }) {
        return {
          status: 200,
          body: { subscription: await updateSubscription(db, principal.advertiserId, uuidOr404(params.id), body, policy) },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${BASE}/:id`,
      operationId: 'deleteWebhookSubscription',
      summary: 'Remove a subscription and the record of its deliveries.',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      params: IdParams,
      responses: {
        200: { description: 'Removed.', schema: z.object({ deleted: z.literal(true), id: z.uuid() }) },
        ...manages,
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        const id = uuidOr404(params.id);
        await deleteSubscription(db, principal.advertiserId, id);
        return { status: 200, body: { deleted: true, id } };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${BASE}/:id/rotate-secret`,
      operationId: 'rotateWebhookSecret',
      summary:
        'A new signing secret, shown once. The previous one signs too (a second signature) for WEBHOOK_SECRET_OVERLAP_HOURS (24 h by default).',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      params: IdParams,
      responses: {
        200: { description: 'Rotated; the new secret is shown this once.', schema: SubscriptionWithSecretSchema },
        ...manages,
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        return {
          status: 200,
          body: await rotateSecret(db, principal.advertiserId, uuidOr404(params.id), config.WEBHOOK_SECRET_OVERLAP_HOURS, secrets),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${BASE}/:id/deliveries`,
      operationId: 'listWebhookDeliveries',
      summary: "The subscription's deliveries, newest event first: each attempt's status code and latency, and the next retry.",
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      params: IdParams,
      query: DeliveriesQuerySchema,
      responses: {
        200: { description: 'Deliveries.', schema: z.object({ deliveries: z.array(DeliverySchema) }) },
        ...manages,
        404: { description: 'Not found.' },
      },
      async handler({ principal, params, query }) {
        return { status: 200, body: { deliveries: await listDeliveries(db, principal.advertiserId, uuidOr404(params.id), query) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${BASE}/:id/deliveries/:deliveryId/redeliver`,
      operationId: 'redeliverWebhook',
      summary: 'Send a delivered or failed delivery again (same webhook-id), with a fresh set of retries.',
      tags: ['webhooks'],
      access: 'bearer',
      scope: 'caller',
      authorize: mayManage,
      params: DeliveryParams,
      responses: {
        202: { description: 'Queued.', schema: z.object({ delivery: DeliverySchema }) },
        ...manages,
        404: { description: 'Not found.' },
        409: { description: 'The delivery is still being attempted.' },
      },
      async handler({ principal, params, log }) {
        const delivery = await redeliver(db, principal.advertiserId, uuidOr404(params.id), uuidOr404(params.deliveryId));
        // The workers' sweep finds it anyway; waking it now only saves the wait.
        await wake(delivery.id).catch((err: Error) => log.warn({ err: { message: err.message } }, 'redelivery left to the sweep'));
        return { status: 202, body: { delivery } };
      },
    }),
  ];
}
