import type { Config } from '../config/config';
import { createTokenVerifier, type TokenVerifier } from './verifier';
import { loadDevIssuer, DEV_ISSUER, type DevIssuer } from './dev-issuer';

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
