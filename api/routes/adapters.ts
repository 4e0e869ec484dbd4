import { z } from 'zod';
import { ChannelSchema } from '../../shared/auth/products';
import { ADAPTERS, findAdapter, type AdapterDescriptor } from '../../shared/adapters/catalogue';
import { requireSellerAccount } from '../../shared/adapters/credentials';
import { ProductsUnavailable, SellerProductSchema, sellerProducts } from '../../shared/adapters/adcp/products';
import { AdcpWebhookReceiver, WebhookRefused } from '../../shared/adapters/adcp/webhooks';
import { settlePendingTask } from '../../shared/bookings/pending-tasks';
import { findTask } from '../../shared/suppliers/supplier-tasks';
import { isUnknown } from '../../shared/suppliers/attempts';
import { readBackTaskAnswer } from '../../shared/adapters/adcp/read-back';
import { secretBoxOf } from '../../shared/crypto/secret-box';
import { webhookAuthOf } from '../../shared/config/adcp-sellers';
import { Problem, notFound, unavailable, unprocessable } from '../../shared/errors';
import { findPersona } from '../../shared/personas/persona-store';
import type { ApiDeps } from '../deps';
import { defineRoute, type RouteDef } from '../http/route';
import { PathId } from '../http/params';

const CapabilitiesSchema = z.object({
  majorVersions: z.array(z.number().int()),
  protocols: z.array(z.string()),
  idempotency: z.object({ supported: z.boolean(), replayTtlSeconds: z.number().int().nullable() }),
  reportingDeliveryMethods: z.array(z.string()),
  sandboxAccounts: z.boolean().nullable(),
  fetchedAt: z.string(),
});

const AdapterSchema = z
  .object({
    key: z.string(),
    kind: z.enum(['sandbox', 'workflow', 'native-staged', 'live', 'adcp']),
    channels: z.array(ChannelSchema),
    modes: z.array(z.enum(['sandbox', 'live'])),
    requiresCredential: z.boolean(),
    executionMethod: z.enum(['manual', 'computer-use']).nullable(),
    endDateChanges: z.boolean(),
    /** Whether the supplier holds a line to its daily cap itself; where not, Flightdeck pauses the line at its cap. */
    capsNatively: z.boolean(),
    /** AdCP sellers: what the seller declared (get_adcp_capabilities), or why it could not be asked. */
    seller: z
      .object({
        name: z.string(),
        capabilities: CapabilitiesSchema.nullable(),
        unavailable: z.string().nullable(),
      })
      .optional(),
  })
  .meta({ id: 'Adapter' });

const ProductsQuery = z
  .strictObject({
    channel: ChannelSchema,
    brief: z.string().trim().min(1).max(2_000).optional(),
    /** Instead of a brief: a persona of the workspace, whose description is the brief. */
    personaId: PathId.optional(),
  })
  .refine((q) => (q.brief === undefined) !== (q.personaId === undefined), { message: 'give exactly one of brief and personaId' });

const WebhookReceipt = z
  .object({
    /** What the webhook did: settled the booking it answers, found it settled already, or concerned nothing waiting. */
    result: z.enum(['settled', 'already-settled', 'still-pending', 'nothing-waiting']),
  })
  .meta({ id: 'SellerWebhookReceipt' });

/**
 * The supplier catalogue, with each AdCP seller's capabilities; an AdCP seller's products for a
 * brief; and the seller's signed webhooks, where it pushes the outcome of a booking it finished.
 */
export function adapterRoutes(deps: ApiDeps): RouteDef[] {
  const { db, sellers } = deps;
  const webhooks = new AdcpWebhookReceiver(db, {
    allowPrivateJwks: deps.config.NODE_ENV !== 'production',
    secrets: secretBoxOf(deps.config),
  });

  async function view(d: AdapterDescriptor) {
    const base = {
      key: d.key,
      kind: d.kind,
      channels: [...d.channels],
      modes: [...d.modes],
      requiresCredential: d.requiresCredential,
      executionMethod: d.executionMethod,
      endDateChanges: d.endDateChanges,
      capsNatively: d.capsNatively,
    };
    if (d.kind !== 'adcp') return base;
    const connection = sellers.get(d.key);
    if (!connection) return { ...base, seller: { name: d.key, capabilities: null, unavailable: 'Not configured in this process.' } };
    try {
      const capabilities = await connection.capabilities();
      return { ...base, seller: { name: connection.seller.display ?? connection.seller.key, capabilities, unavailable: null } };
    } catch (err) {
      deps.logger.warn({ adapterKey: d.key, err: { message: (err as Error).message } }, 'seller capabilities unavailable');
      const last = connection.lastCapabilities();
      return { ...base, seller: { name: connection.seller.key, capabilities: last, unavailable: 'The seller did not answer.' } };
    }
  }

  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/adapters',
      operationId: 'listAdapters',
      summary: "The suppliers this deployment books through, with each AdCP seller's declared capabilities (cached).",
      tags: ['suppliers'],
      access: 'bearer',
      scope: 'caller',
      responses: { 200: { description: 'The catalogue.', schema: z.object({ adapters: z.array(AdapterSchema) }) } },
      async handler() {
        return { status: 200, body: { adapters: await Promise.all(ADAPTERS.map(view)) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/adapters/:key/products',
      operationId: 'listSellerProducts',
      summary:
        "An AdCP seller's products and pricing options for a brief (or a persona's description), for plan lines to name. Needs approved access to the seller.",
      tags: ['suppliers'],
      access: 'bearer',
      scope: 'caller',
      params: z.strictObject({ key: PathId }),
      query: ProductsQuery,
      responses: {
        200: { description: "The seller's products.", schema: z.object({ products: z.array(SellerProductSchema) }) },
        404: { description: 'No such AdCP seller, or no such persona.' },
        422: { description: 'The seller does not sell the channel, or the workspace has no approved access to it.' },
        503: { description: 'The seller did not answer.' },
      },
      async handler({ principal, params, query }) {
        const adapter = findAdapter(params.key);
        const connection = sellers.get(params.key);
        if (!adapter || adapter.kind !== 'adcp' || !connection) throw notFound();
        // A channel outside the caller's product is as unknown as another tenant's resource.
        if (!principal.channels.includes(query.channel)) throw notFound();
        if (!adapter.channels.includes(query.channel)) {
          throw unprocessable(`Adapter ${adapter.key} does not sell ${query.channel}.`, 'adapter_channel_unsupported', 'correctable');
        }
        let brief = query.brief;
        if (query.personaId !== undefined) {
          const persona = await findPersona(db, principal.advertiserId, query.personaId);
          if (!persona) throw notFound();
          brief = persona.nlDescription;
        }
        const account = await requireSellerAccount(db, adapter.key, principal.advertiserId);
        try {
          return { status: 200, body: { products: await sellerProducts(connection, { channel: query.channel, brief: brief!, account }) } };
        } catch (err) {
          if (!(err instanceof ProductsUnavailable)) throw err;
          deps.logger.warn({ adapterKey: adapter.key, err: { message: err.message } }, 'seller products unavailable');
          throw unavailable(`${adapter.key} did not answer; try again shortly.`);
        }
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/adapters/:key/webhooks',
      operationId: 'sellerWebhook',
      summary:
        "An AdCP seller's push of a booking's or an in-flight change's outcome (the task it answered submitted). Authenticated as the seller is configured to, alone: its RFC 9421 signature verified against the keys it publishes, or AdCP 3.0's legacy HMAC-SHA256 or bearer token with the secret issued to it; unsigned, forged, stale, replayed and wrongly-schemed ones change nothing.",
      tags: ['suppliers'],
      access: 'public',
      params: z.strictObject({ key: PathId }),
      body: z.instanceof(Buffer),
      rawBody: true,
      bodyLimitBytes: 256 * 1024,
      responses: {
        200: { description: 'Verified; the booking or change it answers is settled (at most once).', schema: WebhookReceipt },
        400: { description: 'Signed, but not a task outcome.' },
        401: {
          description:
            'Unsigned, wrongly signed, signed by a key the seller does not publish or another scheme than its own, stale or replayed.',
        },
        404: { description: 'No such AdCP seller, or one that pushes no webhooks.' },
      },
      async handler({ params, body, req, log }) {
        const connection = sellers.get(params.key);
        if (!connection || !webhookAuthOf(connection.seller)) throw notFound();
        // The signature covers the URL the seller posted to: this service's public address.
        const request = {
          method: req.method,
          url: `${deps.urls.base}${req.originalUrl}`,
          headers: req.headers,
          body: body.toString('utf8'),
        };
        let verified;
        try {
          verified = await webhooks.receive(connection, request);
        } catch (err) {
          if (!(err instanceof WebhookRefused)) throw err;
          log.warn({ adapterKey: params.key, code: err.code }, 'seller webhook refused');
          throw new Problem(err.status, err.code, err.status === 401 ? 'Signature refused' : 'Invalid request', err.message, 'terminal');
        }
        const task = verified.kind === 'task-outcome' ? await findTask(db, connection.adapterKey, verified.taskId) : undefined;
        if (verified.kind !== 'task-outcome' || !task) return { status: 200, body: { result: 'nothing-waiting' } };
        const ids = { attemptId: task.attempt_id, bookingId: task.booking_id, lineId: task.line_id };
        // A change the seller says it finished is read back, as a polled one is.
        const outcome =
          task.operation && !isUnknown(verified.outcome) && verified.outcome.kind === 'applied'
            ? await readBackTaskAnswer(connection, db, { bookingId: task.booking_id, ...task.operation }, verified.outcome)
            : verified.outcome;
        const settled = await settlePendingTask(db, ids, outcome, 'webhook');
        log.info({ adapterKey: params.key, taskId: task.task_id, result: settled }, 'seller webhook applied');
        const result = settled === 'already-settled' ? 'already-settled' : settled === 'pending' ? 'still-pending' : 'settled';
        return { status: 200, body: { result } };
      },
    }),
  ];
}
