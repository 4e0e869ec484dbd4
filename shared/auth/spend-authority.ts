import { assertHuman } from './guards';
import { isHuman, type Principal } from './principal';

/**
 * Who may commit a workspace's money (docs/architecture.md, "Who may spend"). One rule, read by
 * the REST routes, the console and `/mcp` alike:
 * - approving a plan needs a person with `plan:approve`;
 * - launching needs a person with `campaign:launch`; a delegated agent launches only through an
 *   approved `campaign.launch`, and whoever approves that needs `campaign:launch` too, so the
 *   agent's path is never weaker than a person's;
 * - changing the workspace's spend settings needs `workspace:admin`.
 */
export const SPEND_PERMISSIONS = {
  approvePlan: 'plan:approve',
  launch: 'campaign:launch',
  settings: 'workspace:admin',
} as const;

/** The permissions a token grants over spending, as the README's owner token carries them. */
export const ALL_SPEND_PERMISSIONS = Object.values(SPEND_PERMISSIONS);

export function assertMayApprovePlan(p: Principal): void {
  assertHuman(p, 'approve a plan', SPEND_PERMISSIONS.approvePlan);
}

/** A person launching needs `campaign:launch`; an agent's launch is bound to an approval that needed it (`approvalPermission`). */
export function assertMayLaunch(p: Principal): void {
  if (isHuman(p)) assertHuman(p, 'launch a campaign', SPEND_PERMISSIONS.launch);
}

export function assertMayChangeSpendSettings(p: Principal): void {
  assertHuman(p, 'change the workspace spend settings', SPEND_PERMISSIONS.settings);
}

/** Beyond `agent:approve`: what approving a prepared agent action needs, for actions a person would need a permission for. */
const ACTION_PERMISSIONS: Record<string, string> = { 'campaign.launch': SPEND_PERMISSIONS.launch };

export function assertMayApproveAction(p: Principal, actionName: string): void {
  const needed = ACTION_PERMISSIONS[actionName];
  if (needed) assertHuman(p, `approve ${actionName}`, needed);
}

/**
 * Approvals a plan needs: two different people when the workspace asks for a second approver
 * above an amount and the campaign may commit more than it; one otherwise.
 */
export const approvalsRequired = (maximumCommitmentMinor: number, secondApprovalAboveMinor: number | null): 1 | 2 =>
  secondApprovalAboveMinor !== null && maximumCommitmentMinor > secondApprovalAboveMinor ? 2 : 1;
