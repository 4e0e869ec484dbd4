import { z } from 'zod';
import {
  FundingRequestIdSchema,
  ReconcileRequestSchema,
  TopupRequestSchema,
  createTopup,
  inspectTopup,
  reconcileTopup,
} from '../../shared/billing/funding';
import { SummaryQuerySchema, billingSummary } from '../../shared/reporting/billing-summary';
import {
  BillingSummaryEnvelope,
  CreatedTopupSchema,
  SettlementReceiptSchema,
  TopupInspectionSchema,
  TopupReconciliationSchema,
} from '../../shared/billing/billing-views';
import type { ApiDeps } from '../deps';
import { requireHuman } from '../http/guards';
import { defineRoute } from '../http/route';

const RequestParams = z.strictObject({ requestId: FundingRequestIdSchema });
const RawEvent = z.instanceof(Buffer);
const reconciler = requireHuman('inspect or reconcile funding requests', 'operator:reconcile');

/** Wallet funding (top-up, signed settlement, inspect, reconcile) and the billing summary (spec 25–27). */
export function billingRoutes(deps: ApiDeps) {
  const { db, config, payments } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/billing/topup/requests',
      operationId: 'createTopupRequest',
      summary:
        'A person asks to fund the wallet: a committed funding request and a checkout session at the payment provider. Only signed settlement credits the wallet.',
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: requireHuman('fund a wallet'),
      body: TopupRequestSchema,
      idempotency: 'required',
      responses: {
        201: { description: 'The funding request and where to pay.', schema: CreatedTopupSchema },
        400: { description: 'Amount outside the configured bounds, or an invalid body.' },
        403: { description: 'Delegated agents cannot fund a wallet.' },
        503: { description: 'The payment provider could not be reached.' },
      },
      async handler({ principal, body }) {
        const bounds = {
          minMinor: config.BILLING_TOPUP_MIN_MINOR,
          maxMinor: config.BILLING_TOPUP_MAX_MINOR,
          returnUrl: `${deps.urls.base}/billing/topup/return`,
        };
        return { status: 201, body: await createTopup(db, payments.provider, principal, body, bounds) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/billing/topup/requests/:requestId',
      operationId: 'inspectTopupRequest',
      summary: 'Inspect a funding request: its state, amounts, provider session, settlement events and ledger entries.',
      tags: ['billing', 'operators'],
      access: 'bearer',
      scope: 'caller',
      authorize: reconciler,
      params: RequestParams,
      responses: {
        200: { description: 'The request and its evidence.', schema: TopupInspectionSchema },
        403: { description: 'Needs a person with operator:reconcile.' },
        404: { description: 'Not found.' },
      },
      async handler({ principal, params }) {
        return { status: 200, body: await inspectTopup(db, principal, params.requestId) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/billing/topup/requests/:requestId/reconcile',
      operationId: 'reconcileTopupRequest',
      summary: 'Match the exact provider session against the request and record the result. Never credits the wallet.',
      tags: ['billing', 'operators'],
      access: 'bearer',
      scope: 'caller',
      authorize: reconciler,
      params: RequestParams,
      body: ReconcileRequestSchema,
      responses: {
        200: { description: 'matched, mismatched, unpaid or not-found, recorded as evidence.', schema: TopupReconciliationSchema },
        403: { description: 'Needs a person with operator:reconcile.' },
        404: { description: 'Not found.' },
        409: { description: 'The session belongs to another funding request.' },
        503: { description: 'The payment provider could not be reached.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: await reconcileTopup(db, payments.provider, principal, params.requestId, body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/billing/webhooks/payment-provider',
      operationId: 'paymentProviderWebhook',
      summary: "The payment provider's signed settlement events. Authenticated by the provider's signature alone.",
      tags: ['billing'],
      access: 'public',
      body: RawEvent,
      rawBody: true,
      bodyLimitBytes: 512 * 1024,
      responses: {
        200: { description: 'Received (and applied at most once).', schema: SettlementReceiptSchema },
        400: { description: 'Unsigned, wrongly signed, stale or malformed.' },
      },
      async handler({ body, headers }) {
        const signature = typeof headers['stripe-signature'] === 'string' ? headers['stripe-signature'] : undefined;
        return { status: 200, body: await payments.settle(body, signature) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/billing/summary',
      operationId: 'billingSummary',
      summary:
        "Media spend, accrued fees, asset charges and wallet balances for a month (default: the current UTC month; in sandbox billing, the month of the workspace's sandbox clock).",
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      query: SummaryQuerySchema,
      completeness: 'unmodeled',
      responses: {
        200: { description: 'The month.', schema: BillingSummaryEnvelope },
        400: { description: 'A malformed or future period.' },
      },
      async handler({ principal, query }) {
        return { status: 200, body: await billingSummary(db, principal, query, config.BILLING_MODE) };
      },
    }),
  ];
}
