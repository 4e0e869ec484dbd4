import { forbidden } from '../errors';
import type { Principal } from './principal';

/**
 * The product-scope rule, one place: a resource concerns a set of channels, and the caller
 * sees it only when every one of them is within the caller's entitlement. A campaign on
 * ctv and dooh is invisible to a DOOH-only token, exactly like another tenant's.
 */
export function withinScope(p: Pick<Principal, 'channels'>, channels: readonly string[]): boolean {
  return channels.every((c) => (p.channels as readonly string[]).includes(c));
}

/** Creating or naming a channel outside the product is an action the product refuses: 403. */
export function requireEntitled(p: Pick<Principal, 'channels'>, channels: readonly string[]): void {
  const outside = [...new Set(channels)].filter((c) => !(p.channels as readonly string[]).includes(c));
  if (outside.length) throw forbidden(`Your product does not include ${outside.join(', ')}.`, 'channel_not_entitled');
}
