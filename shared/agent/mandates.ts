import type { Knex } from 'knex';
import { z } from 'zod';
import { forbidden } from '../errors';
import { toMinor } from '../db/knex';
import type { Principal } from '../auth/principal';
import { CurrencySchema, type Commitment } from './actions';

export const MandateSchema = z
  .strictObject({
    allowedActions: z.array(z.string().min(1).max(120)).min(1).max(20),
    budgetCeilingMinor: z.number().int().min(0).max(1_900_000_000),
    currency: CurrencySchema,
  })
  .meta({ id: 'AgentMandate' });
export type Mandate = z.infer<typeof MandateSchema>;

export async function putMandate(db: Knex, p: Principal, agentClientId: string, m: Mandate): Promise<Mandate & { agentClientId: string }> {
  await db('agent_mandates')
    .insert({
      advertiser_id: p.advertiserId,
      agent_client_id: agentClientId,
      allowed_actions: m.allowedActions,
      budget_ceiling_minor: m.budgetCeilingMinor,
      currency: m.currency,
      granted_by: p.userId,
    })
    .onConflict(['advertiser_id', 'agent_client_id'])
    .merge(['allowed_actions', 'budget_ceiling_minor', 'currency', 'granted_by', 'updated_at']);
  return { agentClientId, ...m };
}

export async function listMandates(db: Knex, advertiserId: string) {
  const rows = await db('agent_mandates').where({ advertiser_id: advertiserId }).orderBy('agent_client_id');
  return rows.map((r) => ({
    agentClientId: r.agent_client_id as string,
    allowedActions: r.allowed_actions as string[],
    budgetCeilingMinor: toMinor(r.budget_ceiling_minor),
    currency: r.currency as Mandate['currency'],
  }));
}

/**
 * A mandate bounds what an agent may propose: the actions it may prepare and the most it may
 * commit. It never replaces the human's exact approval.
 */
export async function checkMandate(db: Knex, p: Principal, action: string, commitment: Commitment): Promise<void> {
  if (!p.agentClientId) return;
  const row = await db('agent_mandates').where({ advertiser_id: p.advertiserId, agent_client_id: p.agentClientId }).first();
  if (!row) throw forbidden(`Agent ${p.agentClientId} has no mandate in this workspace.`, 'mandate_missing');
  if (!(row.allowed_actions as string[]).includes(action))
    throw forbidden(`The agent's mandate does not allow ${action}.`, 'mandate_action_not_allowed');
  if (commitment.budgetMinor > 0 && row.currency !== commitment.currency) {
    throw forbidden(`The agent's mandate is in ${row.currency}; this action commits ${commitment.currency}.`, 'mandate_currency_mismatch');
  }
  if (commitment.budgetMinor > toMinor(row.budget_ceiling_minor)) {
    throw forbidden(
      `This action commits ${commitment.budgetMinor}, over the agent's ceiling of ${toMinor(row.budget_ceiling_minor)}.`,
      'mandate_budget_exceeded',
    );
  }
}
