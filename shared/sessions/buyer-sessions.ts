import { isUuid } from '../ids';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { conflict, notFound } from '../errors';
import type { Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import { findPlan } from '../plans/plan-store';
import { findPersona } from '../personas/persona-store';
import { creativeView } from '../creatives/creative-store';
import { requireInScope } from '../access/resource-scope';
import { ProductScopeSchema } from '../auth/products';
import { DateTimeSchema } from '../wire';

export const WORKFLOWS = ['brief_to_plan', 'creative_direction', 'campaign_review', 'launch_assistance'] as const;
export const MAX_MESSAGES = 40;
export const MAX_HISTORY = 128;

const Ref = z.string().min(1).max(128);
export const ContextSchema = z.strictObject({
  campaignId: Ref.optional(),
  planId: Ref.optional(),
  personaId: Ref.optional(),
  creativeId: Ref.optional(),
});

export const CreateSessionSchema = z
  .strictObject({ workflow: z.enum(WORKFLOWS), context: ContextSchema.default({}) })
  .meta({ id: 'CreateBuyerSession' });

export const AppendMessageSchema = z
  .strictObject({
    revision: z.number().int().min(1),
    role: z.enum(['user', 'assistant']),
    message: z.string().min(1).max(20_000),
    requestId: z.uuid(),
    history: z.array(z.record(z.string(), z.unknown())).max(MAX_HISTORY).default([]),
  })
  .meta({ id: 'AppendBuyerSessionMessage' });

/** Spec "Buyer session": the response shape, and the type the code builds it with. */
export const BuyerSessionSchema = z
  .object({
    id: z.uuid(),
    workflow: z.enum(WORKFLOWS),
    context: ContextSchema,
    revision: z.number().int().min(1),
    activeTurnId: z.uuid().nullable(),
    status: z.enum(['running', 'idle']),
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']), message: z.string(), requestId: z.uuid() })).max(MAX_MESSAGES),
    history: z.array(z.record(z.string(), z.unknown())).max(MAX_HISTORY),
    productScope: ProductScopeSchema,
    references: z.looseObject({}).meta({ description: 'Summaries of the resources the context names.' }),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
  })
  .meta({ id: 'BuyerSession' });
export type BuyerSession = z.infer<typeof BuyerSessionSchema>;
export const BuyerSessionEnvelope = z.object({ session: BuyerSessionSchema }).meta({ id: 'BuyerSessionEnvelope' });

/** Each context id must name something of the caller's; its summary is what the session shows. */
async function resolveReferences(db: Knex, p: Principal, context: z.infer<typeof ContextSchema>): Promise<Record<string, unknown>> {
  const references: Record<string, unknown> = {};
  if (context.campaignId) {
    const c = isUuid(context.campaignId) ? await findCampaign(db, p, context.campaignId) : null;
    if (!c) throw notFound();
    references.campaign = { id: c.id, name: c.name, status: c.status, channels: c.channels, startDate: c.startDate, endDate: c.endDate };
  }
  if (context.planId) {
    const stored = isUuid(context.planId) ? await findPlan(db, p, context.planId) : null;
    if (!stored) throw notFound();
    references.plan = {
      id: stored.plan.id,
      campaignId: stored.plan.campaignId,
      version: stored.plan.version,
      status: stored.plan.status,
      lines: stored.plan.lines.length,
    };
  }
  if (context.personaId) {
    await requireInScope(db, p, 'persona', context.personaId);
    const persona = await findPersona(db, p.advertiserId, context.personaId);
    if (!persona) throw notFound();
    references.persona = { id: persona.id, name: persona.name, version: persona.version };
  }
  if (context.creativeId) {
    const { creative } = await creativeView(db, p, context.creativeId);
    references.creative = {
      id: creative.id,
      name: creative.name,
      channel: creative.channel,
      version: creative.version,
      reviewState: creative.reviewState,
    };
  }
  return references;
}

function toSession(r: Record<string, unknown>, references: Record<string, unknown>): BuyerSession {
  return {
    id: r.id as string,
    workflow: r.workflow as BuyerSession['workflow'],
    context: r.context as BuyerSession['context'],
    revision: r.revision as number,
    activeTurnId: (r.active_turn_id as string | null) ?? null,
    status: r.status as BuyerSession['status'],
    messages: r.messages as BuyerSession['messages'],
    history: r.history as BuyerSession['history'],
    productScope: r.product_scope as BuyerSession['productScope'],
    references,
    createdAt: (r.created_at as Date).toISOString(),
    updatedAt: (r.updated_at as Date).toISOString(),
  };
}

/** A buyer session records a workflow and its references. It grants no authority and starts nothing. */
export async function createSession(db: Knex, p: Principal, body: z.infer<typeof CreateSessionSchema>): Promise<BuyerSession> {
  const references = await resolveReferences(db, p, body.context);
  const [row] = await db('buyer_sessions')
    .insert({
      id: randomUUID(),
      advertiser_id: p.advertiserId,
      user_id: p.userId,
      agent_client_id: p.agentClientId,
      workflow: body.workflow,
      context: JSON.stringify(body.context),
      product_scope: JSON.stringify(ProductScopeSchema.parse({ product: p.product, channels: p.channels })),
    })
    .returning('*');
  return toSession(row, references);
}

async function load(db: Knex, p: Principal, id: string, forUpdate = false) {
  if (!isUuid(id)) throw notFound();
  const q = db('buyer_sessions').where({ id, advertiser_id: p.advertiserId }).first();
  if (forUpdate) q.forUpdate();
  const row = await q;
  if (!row) throw notFound();
  return row;
}

export async function readSession(db: Knex, p: Principal, id: string): Promise<BuyerSession> {
  const row = await load(db, p, id);
  return toSession(row, await resolveReferences(db, p, row.context).catch(() => ({})));
}

/**
 * Appends a turn's message with optimistic concurrency on `revision`. A user message opens a
 * turn (running); the assistant's answer with the same requestId closes it (idle).
 */
export async function appendMessage(db: Knex, p: Principal, id: string, body: z.infer<typeof AppendMessageSchema>): Promise<BuyerSession> {
  return db.transaction(async (trx) => {
    const row = await load(trx, p, id, true);
    if (row.revision !== body.revision)
      throw conflict(`The session is at revision ${row.revision}. Read it again before writing.`, 'revision_conflict');
    const messages = row.messages as BuyerSession['messages'];
    const history = row.history as BuyerSession['history'];
    if (messages.length + 1 > MAX_MESSAGES)
      throw conflict(`A session holds at most ${MAX_MESSAGES} messages; start a new session.`, 'session_full', 'terminal');
    if (history.length + body.history.length > MAX_HISTORY)
      throw conflict(`A session holds at most ${MAX_HISTORY} history entries.`, 'session_full', 'terminal');
    let status: BuyerSession['status'];
    let activeTurnId: string | null;
    if (body.role === 'user') {
      if (row.status === 'running') throw conflict('A turn is already running; wait for the assistant to answer it.', 'turn_in_progress');
      status = 'running';
      activeTurnId = body.requestId;
    } else {
      if (row.active_turn_id !== body.requestId)
        throw conflict('An assistant message must answer the running turn (same requestId).', 'turn_mismatch');
      status = 'idle';
      activeTurnId = null;
    }
    const [updated] = await trx('buyer_sessions')
      .where({ id, revision: row.revision })
      .update({
        messages: JSON.stringify([...messages, { role: body.role, message: body.message, requestId: body.requestId }]),
        history: JSON.stringify([...history, ...body.history]),
        status,
        active_turn_id: activeTurnId,
        revision: row.revision + 1,
        updated_at: trx.fn.now(),
      })
      .returning('*');
    return toSession(updated, await resolveReferences(trx, p, updated.context).catch(() => ({})));
  });
}
