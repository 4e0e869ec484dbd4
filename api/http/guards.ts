import { forbidden } from '../../shared/errors';
import { hasPermission, isHuman, type Principal } from '../../shared/auth/principal';

/**
 * Human-only operations, optionally needing a permission from the token: refused with 403
 * before the request is parsed, so a caller who may not act learns nothing more.
 */
export const requireHuman =
  (what: string, permission?: string) =>
  async (principal: Principal): Promise<void> => {
    if (!isHuman(principal)) throw forbidden(`Delegated agents cannot ${what}; a person must.`, 'human_required');
    if (permission && !hasPermission(principal, permission)) throw forbidden(`To ${what} you need ${permission}.`, 'permission_required');
  };
