import type { Config } from '../config';
import type { Logger } from '../logger';
import { createTokenVerifier, type TokenVerifier } from '../auth/verifier';
import { loadDevIssuer, DEV_ISSUER, type DevIssuer } from '../auth/dev-issuer';
import type { EmbeddedDatabase } from './embedded-postgres';
import { ensureLocalRedis } from './local-redis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface ResolvedDatabase {
  url: string;
  embedded: EmbeddedDatabase | null;
}

/** DATABASE_URL, or the embedded development database (refused in production by config). */
export async function resolveDatabase(config: Config, logger: Logger): Promise<ResolvedDatabase> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: null };
  // Loaded only when needed: the package installs process exit hooks of its own.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startEmbeddedPostgres } = require('./embedded-postgres') as typeof import('./embedded-postgres');
  const embedded = await startEmbeddedPostgres(config.DATA_DIR, config.EMBEDDED_PG_PORT, logger);
  return { url: embedded.url, embedded };
}

/** REDIS_URL, or a local Redis that is started if nothing answers. */
export async function resolveRedisUrl(config: Config, logger: Logger): Promise<string> {
  if (config.REDIS_URL) return config.REDIS_URL;
  await ensureLocalRedis(DEFAULT_REDIS_URL, config.REDIS_AUTOSTART, logger);
  return DEFAULT_REDIS_URL;
}

export interface ResolvedAuth {
  verifier: TokenVerifier;
  devIssuer: DevIssuer | null;
  mode: 'jwks' | 'development-issuer';
}

/** The verifier for the configured identity provider's JWKS. */
export function jwksVerifier(config: Config, jwksUrl: string, issuer: string): TokenVerifier {
  return createTokenVerifier({
    issuer,
    audience: config.AUTH_AUDIENCE,
    jwksUrl,
    cooldownMs: config.AUTH_JWKS_COOLDOWN_MS,
    cacheMaxAgeMs: config.AUTH_JWKS_CACHE_MAX_AGE_MS,
    maxStaleMs: config.AUTH_JWKS_MAX_STALE_MS,
  });
}

/** The configured JWKS, or the development issuer when there is none (refused in production by config). */
export async function resolveAuth(config: Config): Promise<ResolvedAuth> {
  if (config.AUTH_JWKS_URL) {
    if (!config.AUTH_ISSUER) throw new Error('AUTH_ISSUER is required with AUTH_JWKS_URL');
    return {
      verifier: jwksVerifier(config, config.AUTH_JWKS_URL, config.AUTH_ISSUER),
      devIssuer: null,
      mode: 'jwks',
    };
  }
  const devIssuer = await loadDevIssuer(config.DATA_DIR, config.AUTH_AUDIENCE, config.AUTH_ISSUER ?? DEV_ISSUER);
  return {
    verifier: createTokenVerifier({ issuer: devIssuer.issuer, audience: devIssuer.audience, jwks: devIssuer.jwks }),
    devIssuer,
    mode: 'development-issuer',
  };
}
