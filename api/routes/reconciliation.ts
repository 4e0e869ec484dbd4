import { z } from 'zod';
import { assertHuman } from '../../shared/auth/guards';
import type { Principal } from '../../shared/auth/principal';
import { CHANNELS } from '../../shared/auth/products';
import { requireEntitled } from '../../shared/auth/scope';
import { sellerBillingTerms } from '../../shared/config/seller-billing';
import {
  acknowledgeDiscrepancy,
  AcknowledgeSchema,
  DiscrepancyListEnvelope,
  DiscrepancyQuerySchema,
  DiscrepancySchema,
  listDiscrepancies,
} from '../../shared/delivery/discrepancies';
import { listMakegoods, MakegoodListEnvelope, MakegoodQuerySchema } from '../../shared/delivery/makegoods';
import { RawBody } from '../../shared/measurement/raw-body';
import { ResolveDisputeSchema, ResolvedEnvelope, resolveDispute } from '../../shared/reconciliation/disputes';
import { importInvoice } from '../../shared/reconciliation/invoice-import';
import { INVOICE_BODY_LIMIT_BYTES } from '../../shared/reconciliation/invoice-parse';
import {
  InvoiceEnvelope,
  InvoiceListEnvelope,
  InvoiceListQuerySchema,
  InvoiceQuerySchema,
  listInvoices,
  readInvoice,
} from '../../shared/reconciliation/invoice-read';
import {
  sellerStatement,
  statementCsv,
  StatementParams,
  StatementQuerySchema,
  StatementSchema,
} from '../../shared/reconciliation/statement';
import type { ApiDeps } from '../deps';
import { IdParams, PathId } from '../http/params';
import { defineRoute, type RouteDef } from '../http/route';

/**
 * Statements, invoices, disputes and make-goods span every line a seller ran for the workspace,
 * whatever its channel: read by anyone of the workspace whose product covers every channel (agents
 * too), changed by people only (docs/billing.md, Reconciliation).
 */
const reads = async (principal: Principal) => requireEntitled(principal, CHANNELS);
const changes = (what: string) => async (principal: Principal) => {
  assertHuman(principal, what);
  requireEntitled(principal, CHANNELS);
};
const READ_403 = { 403: { description: 'A product that does not cover every channel.' } };
const CHANGE_403 = { 403: { description: 'Delegated agents (a person must), or a product that does not cover every channel.' } };

const Bytes = z
  .custom<Buffer>((v) => Buffer.isBuffer(v) && v.length > 0, 'send the invoice as the request body')
  .transform((b) => new RawBody(b));
const LineOfInvoice = z.strictObject({ id: PathId, lineId: PathId });

export function reconciliationRoutes(deps: ApiDeps): RouteDef[] {
  const { db, config } = deps;
  const termsOf = (adapterKey: string) => sellerBillingTerms(config, adapterKey);
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/billing/statements/:seller/:period',
      operationId: 'getSellerStatement',
      summary:
        "A seller's month for the workspace: per line and in total, booked budget, delivered spend final and provisional apart, what is billable, what was captured and the fees on it, and the line's invoice if one arrived. Accept: text/csv gives one row per line and a totals row.",
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: reads,
      params: StatementParams,
      query: StatementQuerySchema,
      responses: {
        200: { description: 'The statement.', schema: StatementSchema, alternatives: { 'text/csv': z.string() } },
        400: { description: 'A malformed seller or month.' },
        ...READ_403,
        404: { description: 'No such seller.' },
      },
      async handler({ principal, params, query, req, res }) {
        const csv = req?.accepts(['application/json', 'text/csv']) === 'text/csv';
        // The CSV is the whole statement; JSON pages its lines (the totals always cover them all).
        const statement = await sellerStatement(db, principal, params.seller, params.period, csv ? undefined : query);
        if (csv) {
          res
            .status(200)
            .type('text/csv; charset=utf-8')
            .setHeader('content-disposition', `attachment; filename="statement-${statement.seller}-${statement.period}.csv"`)
            .send(statementCsv(statement));
          return;
        }
        return { status: 200, body: { statement } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/billing/invoices',
      operationId: 'importInvoice',
      summary:
        "Import a seller's invoice for a month, as JSON { invoiceNumber, seller, period, currency, lines } or text/csv (docs/billing.md), and match each line to the final delivery: approved within the seller's variance, disputed beyond it, with the evidence. All or nothing: every bad row is named and nothing is stored. Idempotency-Key required; people only.",
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: changes('import an invoice'),
      body: Bytes,
      rawBody: true,
      bodyLimitBytes: INVOICE_BODY_LIMIT_BYTES,
      idempotency: 'required',
      responses: {
        201: { description: 'Imported and matched.', schema: InvoiceEnvelope },
        400: { description: 'Bad rows (each named), an unknown line or seller, a currency other than the booking’s; nothing was stored.' },
        ...CHANGE_403,
        409: {
          description: 'The invoice number is already used, a line’s month is already invoiced or not final yet; nothing was stored.',
        },
        413: { description: 'Body too large.' },
      },
      async handler({ principal, body, headers }) {
        return { status: 201, body: await importInvoice(db, principal, body, headers['content-type'], termsOf) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/billing/invoices',
      operationId: 'listInvoices',
      summary: "The workspace's imported invoices, newest first, with their lines counted by state and the amounts at stake.",
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: reads,
      query: InvoiceListQuerySchema,
      responses: { 200: { description: 'Invoices.', schema: InvoiceListEnvelope }, 400: { description: 'A bad filter.' }, ...READ_403 },
      async handler({ principal, query }) {
        return { status: 200, body: await listInvoices(db, principal, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/billing/invoices/:id',
      operationId: 'getInvoice',
      summary:
        'An invoice and its lines in row order (a page of them): each matched to the final figures, its variance, its state, and for a disputed line the evidence.',
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: reads,
      params: IdParams,
      query: InvoiceQuerySchema,
      responses: {
        200: { description: 'The invoice.', schema: InvoiceEnvelope },
        400: { description: 'A bad filter.' },
        ...READ_403,
        404: { description: 'Not found.' },
      },
      async handler({ principal, params, query }) {
        return { status: 200, body: await readInvoice(db, principal, params.id, query) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/billing/invoices/:id/lines/:lineId/resolve',
      operationId: 'resolveInvoiceDispute',
      summary:
        'Resolve a disputed invoice line with one remedy, recorded with who and why: credit (money back to the wallet), invoice_adjustment (the seller reissues the line for less), additional_delivery (a make-good owed by a date) or accepted. A credit or adjustment is one ledger entry, once. People only.',
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: changes('resolve an invoice dispute'),
      params: LineOfInvoice,
      body: ResolveDisputeSchema,
      responses: {
        200: { description: 'The line as resolved, and the make-good it owes.', schema: ResolvedEnvelope },
        400: { description: 'A remedy without its fields, a credit above the invoiced amount, a due date not in the future.' },
        ...CHANGE_403,
        404: { description: 'Not found.' },
        409: { description: 'The line is not disputed, or changed since it was shown (expectedVersion).' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: await resolveDispute(db, principal, params.id, params.lineId, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/billing/makegoods',
      operationId: 'listMakegoods',
      summary: 'The make-goods sellers owe the workspace: impressions owed and delivered at no cost, by when, and whether met or expired.',
      tags: ['billing'],
      access: 'bearer',
      scope: 'caller',
      authorize: reads,
      query: MakegoodQuerySchema,
      responses: { 200: { description: 'Make-goods.', schema: MakegoodListEnvelope }, 400: { description: 'A bad filter.' }, ...READ_403 },
      async handler({ principal, query }) {
        return { status: 200, body: await listMakegoods(db, principal, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/delivery/discrepancies',
      operationId: 'listDeliveryDiscrepancies',
      summary: 'Days a seller (or staff) restated after they were final: both figures, the seller and the day. The final figure stands.',
      tags: ['delivery'],
      access: 'bearer',
      scope: 'caller',
      authorize: reads,
      query: DiscrepancyQuerySchema,
      responses: {
        200: { description: 'Discrepancies.', schema: DiscrepancyListEnvelope },
        400: { description: 'A bad filter.' },
        ...READ_403,
      },
      async handler({ principal, query }) {
        return { status: 200, body: await listDiscrepancies(db, principal, query) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/delivery/discrepancies/:id/acknowledge',
      operationId: 'acknowledgeDeliveryDiscrepancy',
      summary:
        'A person takes a discrepancy up and says how: it leaves the needs-attention list with their note. The final figure still stands.',
      tags: ['delivery'],
      access: 'bearer',
      scope: 'caller',
      authorize: changes('acknowledge a delivery discrepancy'),
      params: IdParams,
      body: AcknowledgeSchema,
      responses: {
        200: { description: 'Acknowledged.', schema: z.object({ discrepancy: DiscrepancySchema }) },
        ...CHANGE_403,
        404: { description: 'Not found.' },
        409: { description: 'Already acknowledged.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: await acknowledgeDiscrepancy(db, principal, params.id, body.note) };
      },
    }),
  ];
}
