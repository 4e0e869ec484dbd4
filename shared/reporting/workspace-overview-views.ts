import { z } from 'zod';
import { WalletSchema } from '../billing/billing-views';
import { FreeFormSchema } from '../wire';
import { ReconciliationFiguresSchema } from './reconciliation-figures';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const Counts = z.record(z.string(), z.number().int().min(0));

/** The workspace overview's response: its sections; rows inside them are not all modeled. */
export const OverviewEnvelope = z
  .object({
    overview: z.looseObject({
      range: z.object({ from: Day, to: Day }),
      campaignId: z.string().nullable(),
      campaigns: z.object({ byStatus: Counts }),
      bookings: z.object({ byStatus: Counts }),
      linesNeedingAttention: z.object({ total: z.number().int().min(0), lines: z.array(FreeFormSchema) }),
      spend: z.object({
        mediaSpendMinor: z.number().int(),
        deliveredSpendMinor: z.number().int(),
        currency: z.literal('GBP'),
        sandbox: z.object({ deliveredSpendMinor: z.number().int(), managementFeesMinor: z.number().int() }),
      }),
      linesOffPace: z.object({ total: z.number().int().min(0), lines: z.array(FreeFormSchema) }),
      pageviews: z.object({ total: z.number().int().min(0), byDay: z.array(FreeFormSchema) }),
      wallet: WalletSchema,
      reconciliation: ReconciliationFiguresSchema,
      openFundingRequests: z.array(FreeFormSchema),
      pendingApprovals: z.array(FreeFormSchema),
    }),
  })
  .meta({ id: 'WorkspaceOverview' });
