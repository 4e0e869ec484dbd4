import { forbidden } from '../errors';
import { hasPermission, isHuman, type Principal } from './principal';

/**
 * The one check for human-only operations, optionally needing a permission from the token:
 * delegated agents get 403 human_required, people without the permission 403 permission_required.
 */
export function assertHuman(principal: Principal, what: string, permission?: string): void {
  if (!isHuman(principal)) throw forbidden(`Delegated agents cannot ${what}; a person must.`, 'human_required');
  if (permission && !hasPermission(principal, permission)) throw forbidden(`To ${what} you need ${permission}.`, 'permission_required');
}
