import crypto, { type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, errors, exportJWK, jwtVerify, type JWK } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import type { Clock } from '../../kernel/clock.js';
import { UnauthorizedError } from '../../kernel/errors.js';

export interface TokenClaims {
  sub: string;
  iat: number;
  exp: number;
  jti: string;
  iss: string;
  /**
   * This registry's origin. Absent only from tokens issued before tokens carried it: they verify here
   * and the caller decides whether their deprecation window is still open.
   */
  aud?: string;
  /**
   * The agent's key generation when it is past its first key: a token names the key it was issued to,
   * so a rotation ends the old key's tokens at once. Absent for an agent that never rotated (generation 0).
   */
  kgen?: number;
}

export interface IssuedToken {
  token: string;
  expiresAt: number;
}

export interface TokenServiceDeps {
  privateKey: KeyObject;
  issuer: string;
  /** The registry's origin: the `aud` of every token, checked on every request. */
  audience: string;
  ttlSeconds: number;
  clock: Clock;
}

/**
 * EdDSA-signed JWTs: `sub` is the agent's DID, `aud` this registry (so a service verifying through the
 * JWKS can tell where a token was issued); the public key is published as a JWKS.
 */
const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

const expiredToken = (): UnauthorizedError =>
  new UnauthorizedError('TOKEN_EXPIRED', 'The token has expired; get a new one at POST /api/auth/token');

const tokenRefusal = (error: unknown): UnauthorizedError =>
  error instanceof errors.JWTExpired
    ? expiredToken()
    : new UnauthorizedError(
        'TOKEN_INVALID',
        'The bearer token is malformed or its signature does not verify',
      );

const base64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

export class TokenService {
  private readonly verified = new Map<string, TokenClaims>();
  /** The JWS protected header, the same for every token: encoded once. */
  private readonly encodedHeader: string;

  private constructor(
    private readonly deps: TokenServiceDeps,
    private readonly publicKey: KeyObject,
    private readonly publicJwk: JWK,
  ) {
    this.encodedHeader = base64url(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: publicJwk.kid }));
  }

  static async create(deps: TokenServiceDeps): Promise<TokenService> {
    const publicKey = crypto.createPublicKey(deps.privateKey);
    const jwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(jwk);
    return new TokenService(deps, publicKey, { ...jwk, kid, alg: 'EdDSA', use: 'sig' });
  }

  /** The key and its JWKS `kid`, for other signatures the JWKS must verify (A2A agent cards). */
  get signingKey(): { privateKey: KeyObject; kid: string } {
    return { privateKey: this.deps.privateKey, kid: this.publicJwk.kid as string };
  }

  get jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  /**
   * A compact JWS (RFC 7515) signed with node:crypto's Ed25519 directly: the same token jose's SignJWT
   * makes, which jose and any JWT library verify, at less cost (jose signs through WebCrypto;
   * docs/decisions/performance.md, "Token signing").
   */
  async issue(did: string, keyGeneration = 0): Promise<IssuedToken> {
    const iat = Math.floor(this.deps.clock.now() / 1000);
    const exp = iat + this.deps.ttlSeconds;
    const claims: TokenClaims = {
      sub: did,
      iss: this.deps.issuer,
      aud: this.deps.audience,
      iat,
      exp,
      jti: uuidv7(),
      ...(keyGeneration > 0 ? { kgen: keyGeneration } : {}),
    };
    const signingInput = `${this.encodedHeader}.${base64url(JSON.stringify(claims))}`;
    // Signed on libuv's thread pool, like the registration's signature check, off the event loop.
    const signature = await new Promise<Buffer>((resolve, reject) =>
      crypto.sign(null, Buffer.from(signingInput, 'utf8'), this.deps.privateKey, (error, signed) =>
        error === null ? resolve(signed) : reject(error),
      ),
    );
    return { token: `${signingInput}.${signature.toString('base64url')}`, expiresAt: exp * 1000 };
  }

  /**
   * Checks signature, algorithm, issuer, audience and expiry; throws 401 errors with a code saying which
   * failed. A token without `aud` (issued before tokens carried one) passes the other checks and comes
   * back without `aud`.
   */
  async verify(token: string): Promise<TokenClaims> {
    const cached = this.verified.get(token);
    if (cached !== undefined) {
      if (cached.exp * 1000 > this.deps.clock.now()) return cached;
      this.verified.delete(token);
      throw expiredToken();
    }
    let claims: TokenClaims;
    try {
      claims = await this.verifyClaims(token, true);
    } catch (error) {
      // jose reports a missing claim only once the signature has verified.
      if (!(
        error instanceof errors.JWTClaimValidationFailed &&
        error.claim === 'aud' &&
        error.reason === 'missing'
      ))
        throw tokenRefusal(error);
      try {
        claims = await this.verifyClaims(token, false);
      } catch (withoutAudience) {
        throw tokenRefusal(withoutAudience);
      }
    }
    this.remember(token, claims);
    return claims;
  }

  private async verifyClaims(token: string, withAudience: boolean): Promise<TokenClaims> {
    const { payload } = await jwtVerify(token, this.publicKey, {
      algorithms: ['EdDSA'],
      // The key also signs A2A agent cards (typ JOSE): only a JWS typed as a JWT is a token.
      typ: 'JWT',
      issuer: this.deps.issuer,
      ...(withAudience ? { audience: this.deps.audience } : {}),
      currentDate: new Date(this.deps.clock.now()),
      requiredClaims: withAudience ? ['sub', 'iat', 'exp', 'jti', 'aud'] : ['sub', 'iat', 'exp', 'jti'],
    });
    // The registry issues one audience, itself; a token naming several is not one of its own.
    if (withAudience && typeof payload.aud !== 'string') throw new Error('aud is not a single string');
    return payload as unknown as TokenClaims;
  }

  /**
   * Verifying an EdDSA signature costs more than a whole cached GET, so verified tokens are kept
   * (bounded, oldest evicted). Only the signature check is skipped on a hit: expiry is checked every
   * time, and the caller still reads the agent's status, so deactivation takes effect at once.
   */
  private remember(token: string, claims: TokenClaims): void {
    if (this.verified.size >= VERIFIED_TOKEN_CACHE_SIZE) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, claims);
  }
}
