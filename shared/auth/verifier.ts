import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwksCache,
  jwtVerify,
  type ExportedJWKSCache,
  type JWTPayload,
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

/** Where a verifier gets the issuer's public keys. */
export interface KeySource {
  getKey: JWTVerifyGetKey;
  /** Changes whenever the key set is fetched again (a rotation may have withdrawn a key). */
  version(): unknown;
}

export interface RemoteKeyOptions {
  /** After a failed fetch, or for an unknown key id, the provider is asked again at most this often. */
  cooldownMs: number;
  /** How long fetched keys count as fresh. */
  cacheMaxAgeMs: number;
  /** While the JWKS cannot be fetched, keys it last published are used for this long. */
  maxStaleMs: number;
  /** How the JWKS is fetched (default: over the network). */
  fetch?: typeof fetch;
}

/**
 * jose's remote JWKS, made stale-if-error: jose refetches when its copy is older than the cache
 * age (or a token names an unknown key id, at most once per cooldown) and fails the request when
 * that fetch fails. Here a failed fetch falls back to the keys jose last fetched, for up to
 * `maxStaleMs`, so an identity-provider outage does not sign everyone out. Within the cooldown
 * after a failure the provider is not asked again, so requests do not queue behind its timeout.
 */
export function remoteKeys(url: string, o: RemoteKeyOptions): KeySource {
  // jose records every successful fetch here ({ jwks, uat }); a failed one leaves it untouched.
  const cache = {} as Partial<ExportedJWKSCache>;
  const remote = createRemoteJWKSet(new URL(url), {
    cooldownDuration: o.cooldownMs,
    cacheMaxAge: o.cacheMaxAgeMs,
    timeoutDuration: 3000,
    [jwksCache]: cache as Record<string, never>,
    ...(o.fetch ? { [customFetch]: o.fetch } : {}),
  });
  let lastKnown: { uat: number; getKey: ReturnType<typeof createLocalJWKSet> } | undefined;
  let failedAt = -Infinity;
  const knownKeys = () => {
    if (!cache.jwks || cache.uat === undefined || Date.now() - cache.uat >= o.maxStaleMs) return undefined;
    if (lastKnown?.uat !== cache.uat) lastKnown = { uat: cache.uat, getKey: createLocalJWKSet(cache.jwks) };
    return lastKnown.getKey;
  };
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (!(knownKeys() && Date.now() - failedAt < o.cooldownMs)) {
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
  return { getKey, version: () => cache.uat };
}

/** Keys held in process (the development issuer's). */
export function localKeys(jwks: JSONWebKeySet): KeySource {
  return { getKey: createLocalJWKSet(jwks), version: () => 0 };
}

/** What a 401 tells the caller, for each way its token can be refused. */
export interface Refusals {
  expired: string;
  claim(name: string): string;
  invalid?: string;
}

export interface JwtVerifierOptions<T extends object> {
  issuer: string;
  audience: string;
  /** The keys, or how to find them (an issuer's JWKS URL may be discovered on first use). */
  keys: KeySource | (() => Promise<KeySource>);
  /** The claims this verifier needs, as what its callers use; a 401 when they are missing. */
  claims(payload: JWTPayload): T;
  refusals: Refusals;
  /** How long a verified token is remembered, at most (never past its exp). 0 turns the cache off. */
  verifiedTokenMaxAgeMs: number;
}

const BAD_TOKEN = [
  errors.JWSInvalid,
  errors.JWTInvalid,
  errors.JWSSignatureVerificationFailed,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys,
];

/**
 * Verifies a JWT access token: asymmetric algorithms only, the exact issuer and audience, a
 * required exp and sub. A bad token is 401; keys that cannot be had (the provider is down or
 * answers 5xx, and the key is not among those last fetched) are 503 `auth_verifier_unavailable`:
 * the token may be fine, and a client told 401 would make a person sign in again for nothing.
 */
export function createJwtVerifier<T extends object>(o: JwtVerifierOptions<T>): (token: string) => Promise<T> {
  const verified = new VerifiedTokenCache<T>(o.verifiedTokenMaxAgeMs);
  const keysOf = typeof o.keys === 'function' ? o.keys : async () => o.keys as KeySource;
  return async (token) => {
    const keys = await keysOf();
    const cacheKey = VerifiedTokenCache.keyOf(token);
    const cached = verified.get(cacheKey, keys.version());
    if (cached) return cached;
    let payload: JWTPayload;
    // Read before verifying: if the key set is fetched meanwhile, the entry is already stale and the next request verifies again.
    const verifiedWith = keys.version();
    try {
      ({ payload } = await jwtVerify(token, keys.getKey, {
        issuer: o.issuer,
        audience: o.audience,
        algorithms: ALLOWED_ALGORITHMS,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch (err) {
      if (err instanceof Problem) throw err;
      if (err instanceof errors.JWTExpired) throw unauthenticated(o.refusals.expired);
      if (err instanceof errors.JWTClaimValidationFailed) throw unauthenticated(o.refusals.claim(err.claim));
      if (BAD_TOKEN.some((kind) => err instanceof kind)) throw unauthenticated(o.refusals.invalid);
      if (isVerifierUnavailable(err)) {
        throw unavailable('The token verifier is unavailable. Retry shortly.', 'auth_verifier_unavailable', 5);
      }
      throw unauthenticated(o.refusals.invalid);
    }
    const result = o.claims(payload);
    verified.set(cacheKey, result, payload.exp!, verifiedWith);
    return result;
  };
}

export function createTokenVerifier(opts: VerifierOptions): TokenVerifier {
  let keys: KeySource;
  if (opts.jwksUrl) {
    keys = remoteKeys(opts.jwksUrl, {
      cooldownMs: opts.cooldownMs ?? 30_000,
      cacheMaxAgeMs: opts.cacheMaxAgeMs ?? 10 * 60_000,
      maxStaleMs: opts.maxStaleMs ?? 24 * 60 * 60_000,
    });
  } else if (opts.jwks) {
    keys = localKeys(opts.jwks);
  } else {
    throw new Error('a verifier needs jwksUrl or jwks');
  }
  return createJwtVerifier({
    issuer: opts.issuer,
    audience: opts.audience,
    keys,
    // A remembered verification never outlives the window in which the JWKS counts as fresh, so a key
    // withdrawn by the identity provider stops verifying when it would without this cache.
    verifiedTokenMaxAgeMs: Math.min(opts.verifiedTokenMaxAgeMs ?? 60_000, opts.jwksUrl ? (opts.cacheMaxAgeMs ?? 10 * 60_000) : Infinity),
    refusals: {
      expired: 'The access token has expired. Sign in again.',
      claim: (name) => `The access token was refused: ${name} is not accepted by this API.`,
    },
    claims(payload) {
      const claims = AccessClaimsSchema.safeParse(payload);
      if (!claims.success) throw unauthenticated('The access token lacks the claims this API needs (sub, org_id).');
      return principalFromClaims(claims.data);
    },
  });
}
