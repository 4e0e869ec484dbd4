import { SPENDER_PERMISSIONS } from '../support/issuer';
import type { TestApi, TestEnv } from '../support/api';
import { approve, draftCampaign, post } from '../support/bookings';

export const STEP = 'x-flightdeck-agent-step-id';
export const DIGEST = 'x-flightdeck-agent-action-digest';

export interface Actors {
  human: string;
  agent: string;
  org: string;
}

/** A workspace with an approver, an agent with a mandate, and the agent's token. */
export async function actors(
  env: TestEnv,
  api: TestApi,
  org: string,
  mandate = { allowedActions: ['campaign.launch', 'audience.sync'], budgetCeilingMinor: 1_000_000, currency: 'GBP' },
): Promise<Actors> {
  const human = await env.issuer.token({ org, user: `${org}-lead`, permissions: ['agent:approve', ...SPENDER_PERMISSIONS] });
  const agent = await env.issuer.token({ org, user: `${org}-lead`, agent: 'planner-bot' });
  const res = await post(api, human, '/api/v1/agent/mandates/planner-bot', mandate, 'PUT');
  if (res.status !== 200) throw new Error(`mandate failed: ${res.status} ${await res.text()}`);
  return { human, agent, org };
}

/** An approved seven-figure-free sandbox campaign ready to launch. */
export async function approvedCampaign(api: TestApi, human: string, budgetMinor = 12_000): Promise<string> {
  const { campaignId, planVersion } = await draftCampaign(api, human, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor }], {
    maximumCommitmentMinor: budgetMinor + 3_000,
  });
  await approve(api, human, campaignId, planVersion);
  return campaignId;
}

export interface Prepared {
  approvalId: string;
  runId: string;
  actionDigest: string;
  commitment: { budgetMinor: number; currency: string };
}

export async function prepare(
  api: TestApi,
  token: string,
  name: string,
  parameters: Record<string, unknown>,
  budgetMinor: number,
  currency = 'GBP',
) {
  return post(api, token, '/api/v1/agent/actions/prepare', { name, parameters, budgetMinor, currency });
}

/** prepare → human approval; returns what the agent needs to execute. */
export async function approvedLaunch(api: TestApi, a: Actors, campaignId: string, commitmentMinor: number) {
  const res = await prepare(api, a.agent, 'campaign.launch', { campaignId }, commitmentMinor);
  if (res.status !== 201) throw new Error(`prepare failed: ${res.status} ${await res.text()}`);
  const prepared = (await res.json()) as Prepared;
  const approved = await post(api, a.human, `/api/v1/agent/approvals/${prepared.approvalId}/approve`, {
    expectedActionDigest: prepared.actionDigest,
  });
  if (approved.status !== 200) throw new Error(`approve failed: ${approved.status} ${await approved.text()}`);
  const { executeStep } = (await approved.json()) as { executeStep: { id: string } };
  return { ...prepared, stepId: executeStep.id };
}

export function execute(api: TestApi, token: string, campaignId: string, stepId?: string, digest?: string) {
  return api.fetch(`/api/v1/campaigns/${campaignId}/launch`, {
    method: 'POST',
    token,
    headers: { ...(stepId ? { [STEP]: stepId } : {}), ...(digest ? { [DIGEST]: digest } : {}) },
  });
}
