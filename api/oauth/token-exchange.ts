import { errors, type Provider } from 'oidc-provider';
import type { DevIssuer } from '../../shared/auth/dev-issuer';
import type { McpGrantVerifier } from '../../shared/mcp/grant';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from '../../shared/mcp/authorization-server';

interface ExchangeParams {
  subject_token?: string;
  subject_token_type?: string;
  audience?: string;
}

/**
 * RFC 8693 at the development server's token endpoint: the agent endpoint (a confidential
 * client, and the only one allowed this grant) trades a user's grant for a short-lived API
 * credential with the same user, workspace, product and channels, `act.sub` = the client the
 * user connected, and no permissions of the user's own.
 */
export function registerTokenExchange(
  provider: Provider,
  opts: {
    exchangeClientId: string;
    verifyGrant: McpGrantVerifier;
    apiIssuer: DevIssuer;
    ttlSeconds: number;
    /** Whether the consent a grant names still stands (not revoked, not expired). */
    grantIsLive(grantId: string): Promise<boolean>;
  },
): void {
  provider.registerGrantType<ExchangeParams>(
    TOKEN_EXCHANGE_GRANT,
    async (ctx) => {
      const { client, params } = ctx.oidc;
      if (client.clientId !== opts.exchangeClientId) throw new errors.UnauthorizedClient('this client may not exchange tokens');
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE || !params.subject_token) {
        throw new errors.InvalidRequest(`subject_token and subject_token_type=${ACCESS_TOKEN_TYPE} are required`);
      }
      if (params.audience !== opts.apiIssuer.audience) throw new errors.InvalidTarget('audience must be the API audience');
      const grant = await opts.verifyGrant(params.subject_token).catch(() => {
        throw new errors.InvalidGrant('subject_token is not a valid grant for the agent endpoint');
      });
      // A grant whose consent was revoked is worth nothing, though its signature still verifies.
      if (!grant.grantId || !(await opts.grantIsLive(grant.grantId))) {
        throw new errors.InvalidGrant('subject_token was revoked or names no grant');
      }
      // Never outlive the grant it was exchanged for.
      const ttl = Math.min(opts.ttlSeconds, grant.expiresAt - Math.floor(Date.now() / 1000));
      if (ttl < 1) throw new errors.InvalidGrant('subject_token has expired');
      const accessToken = await opts.apiIssuer.sign({
        org: grant.advertiserId,
        user: grant.userId,
        product: grant.product,
        channels: grant.channels,
        agent: grant.clientId,
        permissions: [],
        ttlSeconds: ttl,
      });
      ctx.body = { access_token: accessToken, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: ttl };
    },
    ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'actor_token', 'actor_token_type'],
  );
}
