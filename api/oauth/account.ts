import { z } from 'zod';
import { AccessClaimsSchema } from '../../shared/auth/principal';
import { ChannelSchema, ProductSchema } from '../../shared/auth/products';

/**
 * A development sign-in is a user in one workspace, with a product and optional channel
 * entitlement. The account id encodes all of it, so a grant (which oidc-provider keys by
 * account and client) is bound to exactly that workspace.
 */
export const DevAccountSchema = z.strictObject({
  user: AccessClaimsSchema.shape.sub,
  workspace: AccessClaimsSchema.shape.org_id,
  product: ProductSchema,
  channels: z.array(ChannelSchema).min(1).max(7).optional(),
  /** Token permissions (operator:reconcile, agent:approve): only API tokens for the console carry them. */
  permissions: AccessClaimsSchema.shape.permissions.unwrap().min(1).max(10).optional(),
});
export type DevAccount = z.infer<typeof DevAccountSchema>;

export const accountIdOf = (a: DevAccount) => Buffer.from(JSON.stringify(a)).toString('base64url');

export function accountOf(accountId: string): DevAccount | null {
  try {
    const parsed = DevAccountSchema.safeParse(JSON.parse(Buffer.from(accountId, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
