import { z } from 'zod';
import { DateTimeSchema, FreeFormSchema } from '../wire';

/** Response shapes of wallet funding and billing. */
export const FundingRequestSchema = z
  .object({
    id: z.string().regex(/^wtr-[a-f0-9]{64}$/),
    status: z.string().min(1),
    amountMinor: z.number().int().min(0),
    currency: z.literal('GBP'),
    provider: z.string().min(1),
    sessionId: z.string().nullable(),
    checkoutUrl: z.string().nullable(),
    createdBy: z.string().min(1),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
    creditedAt: DateTimeSchema.nullable(),
  })
  .meta({ id: 'FundingRequest' });

export const CreatedTopupSchema = z
  .object({ request: FundingRequestSchema, checkoutUrl: z.string().min(1) })
  .meta({ id: 'CreatedFundingRequest' });

const ReconciliationSchema = z.object({
  id: z.uuid(),
  sessionId: z.string(),
  result: z.enum(['matched', 'mismatched', 'unpaid', 'not-found']),
  detail: FreeFormSchema,
  reconciledBy: z.string().min(1),
  createdAt: DateTimeSchema,
});

export const TopupInspectionSchema = z
  .object({
    request: FundingRequestSchema,
    settlementEvents: z.array(
      z.object({ id: z.string(), type: z.string(), sessionId: z.string().nullable(), result: z.string(), receivedAt: DateTimeSchema }),
    ),
    ledgerEntries: z.array(
      z.object({ id: z.string(), kind: z.string(), amountMinor: z.number().int(), currency: z.string(), createdAt: DateTimeSchema }),
    ),
    reconciliations: z.array(ReconciliationSchema),
  })
  .meta({ id: 'FundingRequestInspection' });

export const TopupReconciliationSchema = z
  .object({ reconciliation: ReconciliationSchema, request: FundingRequestSchema, credited: z.literal(false), note: z.string() })
  .meta({ id: 'FundingReconciliation' });

export const SettlementReceiptSchema = z.object({ received: z.literal(true), result: z.string().min(1) }).meta({ id: 'SettlementReceipt' });

export const WalletSchema = z
  .object({
    balanceMinor: z.number().int(),
    reservedMinor: z.number().int(),
    availableMinor: z.number().int(),
    currency: z.literal('GBP'),
  })
  .meta({ id: 'Wallet' });

export const BillingSummaryEnvelope = z
  .object({
    summary: z.looseObject({
      period: z.string().regex(/^\d{4}-\d{2}$/),
      currency: z.literal('GBP'),
      mediaSpendMinor: z.number().int(),
      managementFeesMinor: z.number().int(),
      platformFeesMinor: z.number().int(),
      feesMinor: z.number().int(),
      assetChargesMinor: z.number().int(),
      deliveredSpendMinor: z.number().int(),
      tier: FreeFormSchema,
      wallet: WalletSchema,
      sandbox: z.object({ deliveredSpendMinor: z.number().int(), managementFeesMinor: z.number().int() }),
    }),
  })
  .meta({ id: 'BillingSummary' });
