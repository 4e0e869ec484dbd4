import { z } from 'zod';
import type { Knex } from 'knex';

/** A workspace's own rules over spending (docs/architecture.md, "Who may spend"). */
export const WorkspaceSettingsSchema = z
  .object({
    /** Above this maximum commitment (minor units), a plan needs two different approvers; null: one suffices. */
    secondApprovalAboveMinor: z.number().int().nullable(),
  })
  .meta({ id: 'WorkspaceSettings' });
export type WorkspaceSettings = z.infer<typeof WorkspaceSettingsSchema>;

export const UpdateWorkspaceSettingsSchema = z
  .strictObject({
    secondApprovalAboveMinor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
  })
  .meta({ id: 'UpdateWorkspaceSettings' });

const toSettings = (row: { second_approval_above_minor: string | number | null } | undefined): WorkspaceSettings => ({
  secondApprovalAboveMinor: row?.second_approval_above_minor == null ? null : Number(row.second_approval_above_minor),
});

export async function readWorkspaceSettings(db: Knex, advertiserId: string): Promise<WorkspaceSettings> {
  return toSettings(await db('workspaces').where({ id: advertiserId }).first('second_approval_above_minor'));
}

export async function writeWorkspaceSettings(
  db: Knex,
  advertiserId: string,
  input: z.infer<typeof UpdateWorkspaceSettingsSchema>,
): Promise<WorkspaceSettings> {
  const [row] = await db('workspaces')
    .where({ id: advertiserId })
    .update({ second_approval_above_minor: input.secondApprovalAboveMinor === null ? null : String(input.secondApprovalAboveMinor) })
    .returning('second_approval_above_minor');
  return toSettings(row);
}
