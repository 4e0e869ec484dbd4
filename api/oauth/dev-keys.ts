import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { createFileOnce } from '../../shared/runtime/file-once';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

/** What the embedded development authorization server keeps across restarts. */
export interface DevAuthorizationKeys {
  /** ES256 private key that signs grants for /mcp (published at /oauth/jwks without `d`). */
  signingJwk: JWK;
  /** Signs the server's cookies (login and consent interactions). */
  cookieKey: string;
  /** The agent endpoint's own client secret for the token exchange. */
  exchangeClientSecret: string;
}

/**
 * Loads or creates `<dataDir>/dev-authorization-server/keys.json`, so that the running
 * service and a restarted one agree on keys and grants survive a restart. Development only.
 */
export async function loadDevAuthorizationKeys(dataDir: string): Promise<DevAuthorizationKeys> {
  const dir = path.resolve(dataDir, 'dev-authorization-server');
  const file = path.join(dir, 'keys.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as DevAuthorizationKeys;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const keys: DevAuthorizationKeys = {
    signingJwk: { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' },
    cookieKey: randomBytes(32).toString('base64url'),
    exchangeClientSecret: randomBytes(32).toString('base64url'),
  };
  fs.mkdirSync(dir, { recursive: true });
  // Another process may have won the race to create it; keep whichever landed first.
  return JSON.parse(createFileOnce(file, JSON.stringify(keys))) as DevAuthorizationKeys;
}
