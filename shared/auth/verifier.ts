import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey, type JSONWebKeySet } from 'jose';
import { unauthenticated, unavailable } from '../errors';
import { AccessClaimsSchema, principalFromClaims, type Principal } from './principal';

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
}

export type TokenVerifier = (token: string) => Promise<Principal>;

/** jose errors that mean "we could not get the keys", as opposed to "the token is bad". */
function isVerifierUnavailable(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true; // network errors from fetch (TypeError) and anything unexpected
}

export function createTokenVerifier(opts: VerifierOptions): TokenVerifier {
  let getKey: JWTVerifyGetKey;
  if (opts.jwksUrl) {
    getKey = createRemoteJWKSet(new URL(opts.jwksUrl), {
      cooldownDuration: opts.cooldownMs ?? 30_000,
      cacheMaxAge: 10 * 60_000,
      timeoutDuration: 3000,
    });
  } else if (opts.jwks) {
    getKey = createLocalJWKSet(opts.jwks);
  } else {
    throw new Error('a verifier needs jwksUrl or jwks');
  }

  return async (token) => {
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        issuer: opts.issuer,
        audience: opts.audience,
        algorithms: ALLOWED_ALGORITHMS,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch (err) {
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
        throw unavailable('The token verifier is unavailable. Retry shortly.', 'auth_verifier_unavailable');
      }
      throw unauthenticated();
    }
    const claims = AccessClaimsSchema.safeParse(payload);
    if (!claims.success) throw unauthenticated('The access token lacks the claims this API needs (sub, org_id).');
    return principalFromClaims(claims.data);
  };
}
