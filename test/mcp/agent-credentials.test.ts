import { describeCaller } from '../../shared/access/auth-context';
import { loadDevIssuer, type DevTokenClaims } from '../../shared/auth/dev-issuer';
import { createTokenVerifier } from '../../shared/auth/verifier';
import { AgentCredentials } from '../../shared/mcp/agent-credentials';
import type { McpGrant } from '../../shared/mcp/grant';
import { WorkspaceCache } from '../../shared/workspaces/workspace-store';
import { StaffCache } from '../../shared/staff/staff-cache';
import { createTestEnv, type TestEnv } from '../support/api';
import { TEST_AUDIENCE, TEST_ISSUER } from '../support/issuer';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const grant: McpGrant = {
  userId: 'alice',
  advertiserId: 'acme',
  product: 'flightdeck-ctv',
  channels: ['ctv'],
  clientId: 'flightdeck-assistant',
  scopes: ['flightdeck'],
  expiresAt: Math.floor(Date.now() / 1000) + 600,
};
const matching: DevTokenClaims = { org: 'acme', user: 'alice', product: 'flightdeck-ctv', agent: 'flightdeck-assistant' };

/**
 * The issuer is someone else's server: here it answers the exchange with whatever credential
 * the test chooses, signed by the key the API trusts, to prove the endpoint checks what it got.
 */
async function credentialsIssuing(claims: DevTokenClaims) {
  const issuer = await loadDevIssuer(env.dataDir, TEST_AUDIENCE, TEST_ISSUER);
  let exchanges = 0;
  const credentials = new AgentCredentials({
    exchange: async () => {
      exchanges++;
      return { accessToken: await issuer.sign({ ...claims, ttlSeconds: 300 }), expiresIn: 300 };
    },
    verifyApiToken: createTokenVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks }),
    describe: (p) => describeCaller(new StaffCache(env.db), new WorkspaceCache(env.db), p),
  });
  return { credentials, exchanges: () => exchanges };
}

describe('the exchanged API credential must say exactly what the grant says', () => {
  test('a matching credential becomes an agent principal marked as coming through /mcp, and is reused', async () => {
    const { credentials, exchanges } = await credentialsIssuing(matching);
    const p = await credentials.principalFor(grant, 'grant-token');
    expect(p).toMatchObject({
      userId: 'alice',
      advertiserId: 'acme',
      agentClientId: 'flightdeck-assistant',
      channels: ['ctv'],
      via: 'mcp',
    });
    await credentials.principalFor(grant, 'grant-token');
    expect(exchanges()).toBe(1);
  });

  test.each([
    ['tenant', { org: 'globex' }],
    ['user', { user: 'mallory' }],
    ['client', { agent: 'other-assistant' }],
    ['client', { agent: undefined }],
    ['product', { product: 'flightdeck' }],
    ['channels', { product: 'flightdeck', channels: ['dooh'] }],
  ])('a credential with another %s is refused (%j)', async (what, change) => {
    const { credentials } = await credentialsIssuing({ ...matching, ...change } as DevTokenClaims);
    const refused = await credentials.principalFor(grant, 'grant-token').catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 403, code: 'agent_credential_mismatch' });
    expect((refused as Error).message).toContain(what);
  });
});
