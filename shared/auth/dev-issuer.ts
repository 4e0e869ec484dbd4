import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createFileOnce } from '../runtime/file-once';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK, type JSONWebKeySet } from 'jose';

export const DEV_ISSUER = 'flightdeck-dev-issuer';

export interface DevTokenClaims {
  org: string;
  user: string;
  permissions?: string[];
  product?: string;
  channels?: string[];
  agent?: string;
  ttlSeconds?: number;
}

export interface DevIssuer {
  issuer: string;
  audience: string;
  jwks: JSONWebKeySet;
  sign(claims: DevTokenClaims): Promise<string>;
}

/**
 * The development issuer: an ES256 key pair kept under `<dataDir>/dev-issuer/`, so the
 * running service and `npm run token` agree on it. Refused when NODE_ENV=production.
 */
export async function loadDevIssuer(dataDir: string, audience: string, issuer = DEV_ISSUER): Promise<DevIssuer> {
  const dir = path.resolve(dataDir, 'dev-issuer');
  const file = path.join(dir, 'signing-key.json');
  let privateJwk: JWK;
  if (fs.existsSync(file)) {
    privateJwk = JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
  } else {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    privateJwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };
    fs.mkdirSync(dir, { recursive: true });
    // Another process may have won the race to create it; keep whichever landed first.
    privateJwk = JSON.parse(createFileOnce(file, JSON.stringify(privateJwk))) as JWK;
  }
  const { d: _d, ...publicJwk } = privateJwk;
  void _d;
  const key = await importJWK(privateJwk, 'ES256');
  return {
    issuer,
    audience,
    jwks: { keys: [publicJwk] },
    async sign(c) {
      const payload: Record<string, unknown> = {
        org_id: c.org,
        permissions: c.permissions ?? [],
        product: c.product ?? 'flightdeck',
      };
      if (c.channels) payload.channels = c.channels;
      if (c.agent) payload.act = { sub: c.agent };
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid!, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(c.user)
        .setIssuedAt()
        .setJti(randomUUID())
        .setExpirationTime(`${c.ttlSeconds ?? 3600}s`)
        .sign(key);
    },
  };
}
