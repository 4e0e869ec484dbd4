import { assertHuman } from '../../shared/auth/guards';
import type { Principal } from '../../shared/auth/principal';

/**
 * A route's `authorize` for human-only operations, optionally needing a permission: refused with
 * 403 before the request is parsed, so a caller who may not act learns nothing more.
 */
export const requireHuman =
  (what: string, permission?: string) =>
  async (principal: Principal): Promise<void> =>
    assertHuman(principal, what, permission);
