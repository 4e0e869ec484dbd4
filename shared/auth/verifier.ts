import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwksCache,
  jwtVerify,
  type ExportedJWKSCache,
  type JWTVerifyGetKey,
  type JSONWebKeySet,
} from 'jose';
import { Problem, unauthenticated, unavailable } from '../errors';
import { AccessClaimsSchema, principalFromClaims, type Principal } from './principal';
import { VerifiedTokenCache } from './verified-token-cache';

/** Asymmetric algorithms only: an HS256 token "signed" with a public key must never verify. */
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export interface VerifierOptions {
  issuer: string;
  audience: string;
  /** A remote JWKS (cached; refetched on an unknown key id, at most once per cooldown). */
  jwksUrl?: string;
  /** Or a local JWKS (the development issuer). */
  jwks?: JSONWebKeySet;
  cooldownMs?: number;
  /** How long fetched keys count as fresh (default 10 minutes). */
  cacheMaxAgeMs?: number;
  /** While the JWKS cannot be fetched, keys it last published are used for this long (default 24 hours). */
  maxStaleMs?: number;
  /** How long a verified token is remembered, at most (never past its exp). Default 60 s; 0 turns the cache off. */
  verifiedTokenMaxAgeMs?: number;
}

export type TokenVerifier = (token: string) => Promise<Principal>;

/** jose errors that mean "we could not get the keys", as opposed to "the token is bad". */
function isVerifierUnavailable(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true; // network errors from fetch (TypeError) and anything unexpected
}

const keyUnknownWhileIdpDown = () =>
  unavailable(
    'The token is signed with a key we do not know yet and the identity provider is unreachable. Retry shortly.',
    'auth_verifier_unavailable',
    5,
  );

/**
 * jose's remote JWKS, made stale-if-error: jose refetches when its copy is older than the cache
 * age (or a token names an unknown key id, at most once per cooldown) and fails the request when
 * that fetch fails. Here a failed fetch falls back to the keys jose last fetched, for up to
 * `maxStaleMs`, so an identity-provider outage does not sign everyone out. Within the cooldown
 * after a failure the provider is not asked again, so requests do not queue behind its timeout.
 */
function staleIfErrorJwks(
  url: string,
  cooldownMs: number,
  cacheMaxAgeMs: number,
  maxStaleMs: number,
): { getKey: JWTVerifyGetKey; keySetVersion: () => number | undefined } {
  // jose records every successful fetch here ({ jwks, uat }); a failed one leaves it untouched.
  const cache = {} as Partial<ExportedJWKSCache>;
  const remote = createRemoteJWKSet(new URL(url), {
    cooldownDuration: cooldownMs,
    cacheMaxAge: cacheMaxAgeMs,
    timeoutDuration: 3000,
    [jwksCache]: cache as Record<string, never>,
  });
  let lastKnown: { uat: number; getKey: ReturnType<typeof createLocalJWKSet> } | undefined;
  let failedAt = -Infinity;
  const knownKeys = () => {
    if (!cache.jwks || cache.uat === undefined || Date.now() - cache.uat >= maxStaleMs) return undefined;
    if (lastKnown?.uat !== cache.uat) lastKnown = { uat: cache.uat, getKey: createLocalJWKSet(cache.jwks) };
    return lastKnown.getKey;
  };
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (!(knownKeys() && Date.now() - failedAt < cooldownMs)) {
      try {
        return await remote(header, token);
      } catch (err) {
        if (!isVerifierUnavailable(err)) throw err;
        failedAt = Date.now();
        if (!knownKeys()) throw err;
      }
    }
    try {
      return await knownKeys()!(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) throw keyUnknownWhileIdpDown();
      throw err;
    }
  };
  // Changes whenever jose fetches the key set, e.g. after a rotation withdrew a key.
  return { getKey, keySetVersion: () => cache.uat };
}

export function createTokenVerifier(opts: VerifierOptions): TokenVerifier {
  let getKey: JWTVerifyGetKey;
  let keySetVersion: () => number | undefined = () => 0;
  if (opts.jwksUrl) {
    ({ getKey, keySetVersion } = staleIfErrorJwks(
      opts.jwksUrl,
      opts.cooldownMs ?? 30_000,
      opts.cacheMaxAgeMs ?? 10 * 60_000,
      opts.maxStaleMs ?? 24 * 60 * 60_000,
    ));
  } else if (opts.jwks) {
    getKey = createLocalJWKSet(opts.jwks);
  } else {
    throw new Error('a verifier needs jwksUrl or jwks');
  }

  // A remembered verification never outlives the window in which the JWKS counts as fresh, so a key
  // withdrawn by the identity provider stops verifying when it would without this cache.
  const verifiedMaxAgeMs = Math.min(opts.verifiedTokenMaxAgeMs ?? 60_000, opts.jwksUrl ? (opts.cacheMaxAgeMs ?? 10 * 60_000) : Infinity);
  const verified = new VerifiedTokenCache(verifiedMaxAgeMs);
  return async (token) => {
    const cacheKey = VerifiedTokenCache.keyOf(token);
    const cached = verified.get(cacheKey, keySetVersion());
    if (cached) return cached;
    let payload: unknown;
    // Read before verifying: if the key set is fetched meanwhile, the entry is already stale and the next request verifies again.
    const verifiedWith = keySetVersion();
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        issuer: opts.issuer,
        audience: opts.audience,
        algorithms: ALLOWED_ALGORITHMS,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch (err) {
      if (err instanceof Problem) throw err;
      if (err instanceof errors.JWTExpired) throw unauthenticated('The access token has expired. Sign in again.');
      if (err instanceof errors.JWTClaimValidationFailed) {
        throw unauthenticated(`The access token was refused: ${err.claim} is not accepted by this API.`);
      }
      if (
        err instanceof errors.JWSInvalid ||
        err instanceof errors.JWTInvalid ||
        err instanceof errors.JWSSignatureVerificationFailed ||
        err instanceof errors.JOSEAlgNotAllowed ||
        err instanceof errors.JOSENotSupported ||
        err instanceof errors.JWKSNoMatchingKey ||
        err instanceof errors.JWKSMultipleMatchingKeys
      ) {
        throw unauthenticated();
      }
      if (isVerifierUnavailable(err)) {
        throw unavailable('The token verifier is unavailable. Retry shortly.', 'auth_verifier_unavailable', 5);
      }
      throw unauthenticated();
    }
    const claims = AccessClaimsSchema.safeParse(payload);
    if (!claims.success) throw unauthenticated('The access token lacks the claims this API needs (sub, org_id).');
    const principal = principalFromClaims(claims.data);
    verified.set(cacheKey, principal, (payload as { exp: number }).exp, verifiedWith);
    return principal;
  };
}
