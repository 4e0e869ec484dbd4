import { createHash } from 'node:crypto';
import { forbidden } from '../errors';
import type { AuthContext } from '../access/auth-context';
import type { Principal } from '../auth/principal';
import type { TokenVerifier } from '../auth/verifier';
import type { ExchangedCredential } from './authorization-server';
import type { McpGrant } from './grant';

export interface AgentCredentialOptions {
  /** RFC 8693 at the issuer: the grant in, an API credential out. */
  exchange(grantToken: string): Promise<ExchangedCredential>;
  /** The API's own verifier: the credential must be one the REST API would accept. */
  verifyApiToken: TokenVerifier;
  /** The auth-context logic of GET /api/v1/auth/context. */
  describe(p: Principal): Promise<AuthContext>;
  /** Exchange again this long before the credential expires. */
  marginSeconds?: number;
  maxEntries?: number;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/** Every way the credential the issuer minted may differ from the grant the user gave. */
export function grantMismatches(grant: McpGrant, ctx: AuthContext): string[] {
  const out: string[] = [];
  if (ctx.user.id !== grant.userId) out.push('user');
  if (ctx.advertiser.id !== grant.advertiserId) out.push('tenant');
  if (ctx.actor !== 'agent' || ctx.agent?.clientId !== grant.clientId) out.push('client');
  if (ctx.product !== grant.product) out.push('product');
  if (!sameSet(ctx.channels, grant.channels)) out.push('channels');
  return out;
}

/**
 * Turns a verified grant into the principal tools act as: exchanged at the issuer for a
 * short-lived API credential, verified as the REST API verifies it, and refused unless it
 * says exactly what the grant says. Kept until shortly before it expires.
 */
export class AgentCredentials {
  private readonly cache = new Map<string, { principal: Principal; renewAt: number }>();

  constructor(private readonly opts: AgentCredentialOptions) {}

  async principalFor(grant: McpGrant, grantToken: string): Promise<Principal> {
    const key = createHash('sha256').update(grantToken).digest('base64url');
    const hit = this.cache.get(key);
    if (hit && hit.renewAt > Date.now()) return hit.principal;
    this.cache.delete(key);

    const credential = await this.opts.exchange(grantToken);
    const verified = await this.opts.verifyApiToken(credential.accessToken);
    const mismatches = grantMismatches(grant, await this.opts.describe(verified));
    if (mismatches.length) {
      throw forbidden(
        `The API credential does not match this grant (${mismatches.join(', ')}); nothing was done.`,
        'agent_credential_mismatch',
      );
    }
    const principal: Principal = { ...verified, via: 'mcp' };
    const margin = Math.min(this.opts.marginSeconds ?? 30, credential.expiresIn / 2);
    if (this.cache.size >= (this.opts.maxEntries ?? 10_000)) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { principal, renewAt: Date.now() + (credential.expiresIn - margin) * 1000 });
    return principal;
  }
}
