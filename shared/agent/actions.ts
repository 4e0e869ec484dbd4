import type { Knex } from 'knex';
import { z } from 'zod';
import { notFound } from '../errors';
import { ChannelSchema } from '../auth/products';
import type { Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import { studyCommitment } from '../studies/study-store';
import { creativeView } from '../creatives/creative-store';
import { rawBodySha256 } from '../measurement/raw-body';
import { findOptimization } from '../optimizations/optimization-store';
import { AmendmentParametersSchema, amendmentIncrease, type AmendmentRequest } from '../bookings/amendments';
import { DailyCapsParametersSchema } from '../delivery/daily-caps';
import { visibleBooking } from '../bookings/visible-booking';

export const CurrencySchema = z.enum(['GBP', 'USD', 'EUR']);
export type Currency = z.infer<typeof CurrencySchema>;
export const BUDGET_POLICIES = ['campaign-commitment', 'zero', 'study-commitment', 'incremental-commitment'] as const;
export type BudgetPolicy = (typeof BUDGET_POLICIES)[number];

export interface Commitment {
  budgetMinor: number;
  currency: Currency;
  policy: BudgetPolicy;
  /** What this action newly reserves (a study's commitment is already funded: 0). */
  incrementalReservationMinor: number;
  description: string;
}

export interface ActionContract {
  name: string;
  method: 'POST';
  /** The REST route that executes it, in OpenAPI path syntax. */
  route: string;
  parameters: z.ZodType<Record<string, unknown>>;
  budgetPolicy: BudgetPolicy;
  idempotency: 'governed-execution-receipt' | 'required';
  /** The parameters as the real request carries them (path params and body), for the execution check. */
  fromRequest(req: { params: Record<string, string>; body: unknown }): unknown;
  /** Money is the server's figure, never the agent's; also proves the resource is the caller's (404). */
  commitment(db: Knex, p: Principal, parameters: Record<string, unknown>): Promise<Commitment>;
}

const zero = (description: string): Commitment => ({
  budgetMinor: 0,
  currency: 'GBP',
  policy: 'zero',
  incrementalReservationMinor: 0,
  description,
});
const bodyObject = (body: unknown) => (body && typeof body === 'object' ? (body as Record<string, unknown>) : {});

const campaignLaunch: ActionContract = {
  name: 'campaign.launch',
  method: 'POST',
  route: '/api/v1/campaigns/{campaignId}/launch',
  parameters: z.strictObject({ campaignId: z.uuid() }),
  budgetPolicy: 'campaign-commitment',
  idempotency: 'governed-execution-receipt',
  fromRequest: ({ params }) => ({ campaignId: params.id }),
  async commitment(db, p, parameters) {
    const campaign = await findCampaign(db, p, String(parameters.campaignId));
    if (!campaign) throw notFound();
    return {
      budgetMinor: campaign.maximumCommitmentMinor,
      currency: 'GBP',
      policy: 'campaign-commitment',
      incrementalReservationMinor: campaign.executionMode === 'live' ? campaign.maximumCommitmentMinor : 0,
      description: `Launch "${campaign.name}" (${campaign.executionMode}): up to ${campaign.maximumCommitmentMinor} GBP minor units committed.`,
    };
  },
};

/** A campaign's pause, resume or stop: every line of its open booking that can take it; no spend. */
function campaignControl(control: 'pause' | 'resume' | 'stop', description: string): ActionContract {
  return {
    name: `campaign.${control}`,
    method: 'POST',
    route: `/api/v1/campaigns/{campaignId}/${control}`,
    parameters: z.strictObject({ campaignId: z.uuid(), note: z.string().trim().min(1).max(2000).optional() }),
    budgetPolicy: 'zero',
    idempotency: 'governed-execution-receipt',
    fromRequest: ({ params, body }) => ({ campaignId: params.id, ...bodyObject(body) }),
    async commitment(db, p, parameters) {
      if (!(await findCampaign(db, p, String(parameters.campaignId)))) throw notFound();
      return zero(description);
    },
  };
}

/** One line's pause or resume, at the line's version: no spend (an automatic rule's smallest step). */
function lineControl(control: 'pause' | 'resume', description: string): ActionContract {
  return {
    name: `line.${control}`,
    method: 'POST',
    route: `/api/v1/bookings/{bookingId}/lines/{lineId}/${control}`,
    parameters: z.strictObject({
      bookingId: z.uuid(),
      lineId: z.uuid(),
      expectedVersion: z.number().int().min(0),
      note: z.string().trim().min(1).max(2000).optional(),
    }),
    budgetPolicy: 'zero',
    idempotency: 'governed-execution-receipt',
    fromRequest: ({ params, body }) => ({ bookingId: params.bookingId, lineId: params.lineId, ...bodyObject(body) }),
    async commitment(db, p, parameters) {
      const booking = await visibleBooking(db, p, String(parameters.bookingId));
      if (!booking.lines.some((l) => l.id === String(parameters.lineId).toLowerCase())) throw notFound();
      return zero(description);
    },
  };
}

const campaignAmend: ActionContract = {
  name: 'campaign.amend',
  method: 'POST',
  route: '/api/v1/campaigns/{campaignId}/amendments',
  parameters: AmendmentParametersSchema,
  budgetPolicy: 'incremental-commitment',
  idempotency: 'required',
  fromRequest: ({ params, body }) => ({ campaignId: params.id, ...bodyObject(body) }),
  async commitment(db, p, parameters) {
    const body = parameters as { campaignId: string } & AmendmentRequest;
    const { campaign, increaseMinor } = await amendmentIncrease(db, p, body.campaignId, body);
    return {
      budgetMinor: increaseMinor,
      currency: 'GBP',
      policy: 'incremental-commitment',
      incrementalReservationMinor: campaign.executionMode === 'live' ? increaseMinor : 0,
      description: `Amend "${campaign.name}" (${campaign.executionMode}): budgets of ${body.lines.length} line(s)${body.endDate ? `, end date ${body.endDate}` : ''}; up to ${increaseMinor} GBP minor units more committed.`,
    };
  },
};

const campaignSetDailyCaps: ActionContract = {
  name: 'campaign.cap',
  method: 'POST',
  route: '/api/v1/campaigns/{campaignId}/daily-caps',
  parameters: DailyCapsParametersSchema,
  budgetPolicy: 'zero',
  idempotency: 'required',
  fromRequest: ({ params, body }) => ({ campaignId: params.id, ...bodyObject(body) }),
  async commitment(db, p, parameters) {
    const campaign = await findCampaign(db, p, String(parameters.campaignId));
    if (!campaign) throw notFound();
    return zero(`Set daily spend caps on "${campaign.name}" (UTC days): a cap holds spend back, it commits nothing.`);
  },
};

const creativeSubmit: ActionContract = {
  name: 'creative.submit',
  method: 'POST',
  route: '/api/v1/creatives/{creativeId}/submit',
  parameters: z.strictObject({
    creativeId: z.string().min(1).max(128),
    adapterKey: z.string().min(1).max(100),
    channel: ChannelSchema.optional(),
  }),
  budgetPolicy: 'zero',
  idempotency: 'governed-execution-receipt',
  fromRequest: ({ params, body }) => ({ creativeId: params.id, ...bodyObject(body) }),
  async commitment(db, p, parameters) {
    await creativeView(db, p, String(parameters.creativeId));
    return zero('Submit a creative for supplier review: no spend.');
  },
};

const audienceSync: ActionContract = {
  name: 'audience.sync',
  method: 'POST',
  route: '/api/v1/campaigns/{campaignId}/sync-audience',
  parameters: z.strictObject({
    campaignId: z.uuid(),
    exposedOn: z.array(ChannelSchema).min(1),
    notExposedOn: z.array(ChannelSchema).default([]),
    channel: ChannelSchema,
    purpose: z.enum(['inclusion', 'suppression']),
    adapterKey: z.string().min(1),
    executionMode: z.enum(['sandbox', 'live']),
  }),
  budgetPolicy: 'zero',
  idempotency: 'governed-execution-receipt',
  fromRequest: ({ params, body }) => ({ campaignId: params.id, ...bodyObject(body) }),
  async commitment(db, p, parameters) {
    if (!(await findCampaign(db, p, String(parameters.campaignId)))) throw notFound();
    return zero('Sync an audience cohort to a supplier: no spend.');
  },
};

const optimizationReject: ActionContract = {
  name: 'optimization.reject',
  method: 'POST',
  route: '/api/v1/optimizations/{optimizationId}/reject',
  parameters: z.strictObject({ optimizationId: z.string().min(1).max(128) }),
  budgetPolicy: 'zero',
  idempotency: 'governed-execution-receipt',
  fromRequest: ({ params }) => ({ optimizationId: params.id }),
  async commitment(db, p, parameters) {
    if (!(await findOptimization(db, p, String(parameters.optimizationId)))) throw notFound();
    return zero('Reject an optimization suggestion: no spend.');
  },
};

const outcomesImport: ActionContract = {
  name: 'outcomes.import',
  method: 'POST',
  route: '/api/v1/campaigns/{campaignId}/outcomes',
  // The rows are bound by the SHA-256 of the exact request body the agent will send.
  parameters: z.strictObject({ campaignId: z.uuid(), contentSha256: z.string().regex(/^[a-f0-9]{64}$/) }),
  budgetPolicy: 'zero',
  idempotency: 'required',
  fromRequest: ({ params, body }) => ({ campaignId: params.id, contentSha256: rawBodySha256(body) }),
  async commitment(db, p, parameters) {
    if (!(await findCampaign(db, p, String(parameters.campaignId)))) throw notFound();
    return zero(`Import outcome rows (body sha256 ${String(parameters.contentSha256)}): no spend.`);
  },
};

const studyDraft: ActionContract = {
  name: 'study.draft',
  method: 'POST',
  route: '/api/v1/brand-lift-studies/{studyId}/draft',
  parameters: z.strictObject({
    studyId: z.uuid(),
    expectedRevision: z.number().int().min(1).max(2147483647),
    expectedConnectionRevision: z.number().int().min(0).max(2147483647).nullable(),
    quoteId: z.uuid(),
    approvalId: z.uuid(),
  }),
  budgetPolicy: 'study-commitment',
  idempotency: 'required',
  fromRequest: ({ params, body }) => ({ studyId: params.studyId, ...bodyObject(body) }),
  async commitment(db, p, parameters) {
    const { amountMinor } = await studyCommitment(db, p, parameters as { studyId: string; quoteId: string; approvalId: string });
    return {
      budgetMinor: amountMinor,
      currency: 'GBP',
      policy: 'study-commitment',
      // A human's study approval already funded it; a generic agent approval never buys or funds a study.
      incrementalReservationMinor: 0,
      description: `Draft the brand lift study against its funded quote of ${amountMinor} GBP minor units.`,
    };
  },
};

/**
 * The one table of governed actions: name → REST route → parameter schema → budget policy. The
 * catalogue, preparation and execution checks read it, routes name their action by its typed
 * key, and the API refuses to start when a route and its row disagree (api/http/governed-routes.ts).
 */
export const ACTION_TABLE = {
  'campaign.launch': campaignLaunch,
  'campaign.pause': campaignControl('pause', 'Pause every running line of the campaign: no spend while paused.'),
  'campaign.resume': campaignControl('resume', 'Resume the campaign’s paused lines: they spend again within their budgets.'),
  'campaign.stop': campaignControl('stop', 'Stop the campaign for good: its lines will not run again.'),
  'campaign.amend': campaignAmend,
  'campaign.cap': campaignSetDailyCaps,
  'line.pause': lineControl('pause', 'Pause one running line: no spend while paused.'),
  'line.resume': lineControl('resume', 'Resume one paused line: it spends again within its budget.'),
  'creative.submit': creativeSubmit,
  'audience.sync': audienceSync,
  'optimization.reject': optimizationReject,
  'study.draft': studyDraft,
  'outcomes.import': outcomesImport,
} as const satisfies Record<string, ActionContract>;
export type ActionName = keyof typeof ACTION_TABLE;

for (const [key, contract] of Object.entries(ACTION_TABLE)) {
  if (contract.name !== key) throw new Error(`action ${contract.name} is filed under ${key}`);
}

export const ACTIONS: readonly ActionContract[] = Object.values(ACTION_TABLE);

export function findAction(name: string): ActionContract | undefined {
  return ACTIONS.find((a) => a.name === name);
}

/** What GET /api/v1/agent/actions publishes: parameter contracts as JSON Schema from the same zod schemas. */
export function describeActions() {
  return ACTIONS.map((a) => ({
    name: a.name,
    method: a.method,
    route: a.route,
    parameters: z.toJSONSchema(a.parameters, { io: 'input' }),
    budgetPolicy: a.budgetPolicy,
    idempotency: a.idempotency,
    exactApprovalRequired: true,
  }));
}
