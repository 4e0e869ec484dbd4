import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';

export const TEST_ISSUER = 'https://issuer.test.flightdeck.dev/';
export const TEST_AUDIENCE = 'https://api.test.flightdeck.dev';

/**
 * What a workspace member who buys media holds: approving plans and launching them. A person's
 * token carries these unless the test names its permissions (`permissions: []` for a member who
 * may not spend); an agent's token never carries any.
 */
export const SPENDER_PERMISSIONS = ['plan:approve', 'campaign:launch'];

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function newSigningKey(alg: 'ES256' | 'RS256' = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface TokenOptions {
  org?: string;
  user?: string;
  permissions?: string[];
  product?: string;
  channels?: string[];
  agent?: string;
  issuer?: string;
  audience?: string;
  expiresIn?: string | number;
  key?: SigningKey;
  omit?: string[];
}

/**
 * An identity provider for tests: a real JWKS over HTTP whose keys can be rotated,
 * and a signer for tokens with any claims.
 */
export class TestIssuer {
  keys: SigningKey[] = [];
  fetches = 0;
  /** While true, the JWKS endpoint answers 503, as an identity provider in an outage does. */
  failing = false;
  private server?: http.Server;
  url = '';

  static async start(): Promise<TestIssuer> {
    const issuer = new TestIssuer();
    issuer.keys = [await newSigningKey()];
    issuer.server = http.createServer((_req, res) => {
      issuer.fetches++;
      if (issuer.failing) {
        res.statusCode = 503;
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: issuer.keys.map((k) => k.publicJwk) }));
    });
    await new Promise<void>((r) => issuer.server!.listen(0, '127.0.0.1', r));
    issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}/.well-known/jwks.json`;
    return issuer;
  }

  /** Replaces the published keys with a new one, as an identity provider does on rotation. */
  async rotate(): Promise<SigningKey> {
    const next = await newSigningKey();
    this.keys = [next];
    return next;
  }

  async token(o: TokenOptions = {}): Promise<string> {
    const key = o.key ?? this.keys[0]!;
    const claims: Record<string, unknown> = {
      org_id: o.org ?? 'org-a',
      permissions: o.permissions ?? (o.agent ? [] : SPENDER_PERMISSIONS),
      product: o.product ?? 'flightdeck',
    };
    if (o.channels) claims.channels = o.channels;
    if (o.agent) claims.act = { sub: o.agent };
    for (const k of o.omit ?? []) delete claims[k];
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: key.publicJwk.alg as string, kid: key.kid })
      .setIssuer(o.issuer ?? TEST_ISSUER)
      .setAudience(o.audience ?? TEST_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(o.expiresIn ?? '10m');
    if (!(o.omit ?? []).includes('sub')) jwt.setSubject(o.user ?? 'user-1');
    return jwt.sign(key.privateKey);
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}
