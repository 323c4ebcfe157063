import { createHash } from 'node:crypto';
import {
  AUTHENTICATION_MAX_AGE_MS,
  AUTHENTICATION_PURPOSE,
  authenticationMessage,
  canonicalJson,
  type KeyType,
} from '@agent-registry/protocol';
import { deprecationAdvice, windowEnd, type DeprecatedAuthForm } from '../../kernel/auth-deprecation.js';
import type { TokenService } from '../identity/tokens.js';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { findActiveAgent, findAgentAuthState } from './agents-store.js';
import { claimSignatureUse } from '../identity/used-signatures-store.js';
import { UnauthorizedError, agentNotFound, agentSuspended } from '../../kernel/errors.js';
import { parseDid } from '@agent-registry/protocol';
import { requireDid } from '../identity/did-param.js';
import { parsePublicKey } from '@agent-registry/protocol';
import { parseEd25519KeyQuickly } from '../identity/ed25519-key.js';
import {
  SIGNING_DOC,
  assertAuthenticationTimestamp,
  signatureCoversAny,
} from '../identity/signature-proof.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { TokenRequest, TokenResponse } from './schemas.js';

export interface AuthenticatedAgent {
  did: string;
  /** Set when the request used a form accepted only during its deprecation window. */
  deprecated?: DeprecatedAuthForm;
}

/** The token response, and whether the login used a form accepted only during its deprecation window. */
export interface IssuedSession extends TokenResponse {
  deprecated?: DeprecatedAuthForm;
}

export interface AuthenticationServiceDeps {
  db: Db;
  clock: Clock;
  tokens: TokenService;
  didWebDomain: string;
  /** This registry's origin (PUBLIC_URL), part of every authentication message. */
  audience: string;
  telemetry: Telemetry;
  /** LEGACY_AUTH_UNTIL (epoch ms): until then, tokens without `aud` and logins without `audience` pass. */
  legacyAuthUntil: number;
}

/**
 * The login message before it named the registry: `{purpose:"authenticate", did, timestamp}`, by the
 * same rules as today's (canonical JSON for Ed25519, this member order for secp256k1).
 */
function loginMessageWithoutAudience(keyType: KeyType, did: string, timestamp: number): string {
  return keyType === 'ed25519'
    ? canonicalJson({ did, purpose: AUTHENTICATION_PURPOSE, timestamp })
    : JSON.stringify({ purpose: AUTHENTICATION_PURPOSE, did, timestamp });
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export class AuthenticationService {
  constructor(private readonly deps: AuthenticationServiceDeps) {}

  /**
   * Resolves the bearer token to its agent. A deactivated agent's tokens are refused everywhere except
   * on its own DID where the route must answer "already deactivated" (a second DELETE answers 404).
   */
  async authenticate(
    authorization: string | undefined,
    options: { allowDeactivatedFor?: string } = {},
  ): Promise<AuthenticatedAgent> {
    if (authorization === undefined || authorization === '') {
      throw new UnauthorizedError(
        'TOKEN_MISSING',
        'Send the header Authorization: Bearer <token>; `agent-registry token` prints a fresh one for the agent ' +
          'the CLI registered, or sign for one at POST /api/auth/token',
      );
    }
    const match = BEARER.exec(authorization);
    if (match === null) {
      throw new UnauthorizedError('TOKEN_INVALID', 'The Authorization header must be "Bearer <token>"');
    }
    const claims = await this.deps.tokens.verify(match[1] as string);
    const deprecated = claims.aud === undefined ? this.accepted('token_without_aud') : undefined;
    const state = await findAgentAuthState(this.deps.db, claims.sub);
    if (state === undefined) {
      throw new UnauthorizedError('TOKEN_INVALID', 'The token names an agent this registry does not know');
    }
    // A token belongs to the key it was issued to: once the agent rotates, the old key's tokens end.
    if ((claims.kgen ?? 0) !== state.key_generation) {
      throw new UnauthorizedError(
        'TOKEN_KEY_ROTATED',
        "The token was issued to a key this agent has since replaced; get a new token signed with the agent's current key at POST /api/auth/token",
      );
    }
    const { status } = state;
    // An operator's suspension refuses the token outright, reads included; the profile says why.
    if (status === 'suspended') throw agentSuspended(claims.sub);
    if (status !== 'active' && !this.namesSameAgent(options.allowDeactivatedFor, claims.sub)) {
      throw new UnauthorizedError(
        'AGENT_DEACTIVATED',
        'The agent this token belongs to has been deactivated',
      );
    }
    return deprecated === undefined ? { did: claims.sub } : { did: claims.sub, deprecated };
  }

  /** A deprecated form that was accepted, counted. */
  private accepted(form: DeprecatedAuthForm): DeprecatedAuthForm {
    this.assertWindowOpen(form);
    this.deps.telemetry.deprecatedAuthentication({ form, accepted: true });
    return form;
  }

  /** Refuses a deprecated form once its window has closed, with an error saying so (counted). */
  private assertWindowOpen(form: DeprecatedAuthForm): void {
    const { legacyAuthUntil, telemetry, audience } = this.deps;
    if (this.deps.clock.now() < legacyAuthUntil) return;
    telemetry.deprecatedAuthentication({ form, accepted: false });
    const advice = deprecationAdvice(form, audience);
    throw form === 'token_without_aud'
      ? new UnauthorizedError(
          'TOKEN_INVALID',
          `The token has no "aud" claim: tokens issued before this registry named itself in "aud" were accepted until ${windowEnd(legacyAuthUntil)}; ${advice}`,
        )
      : new UnauthorizedError(
          'INVALID_SIGNATURE',
          `the signature covers the login message without "audience", accepted until ${windowEnd(legacyAuthUntil)}; ${advice}`,
        );
  }

  private namesSameAgent(rawDid: string | undefined, did: string): boolean {
    if (rawDid === undefined) return false;
    try {
      return parseDid(rawDid, this.deps.didWebDomain).did === did;
    } catch {
      return false;
    }
  }

  /**
   * A fresh token for an agent that signs `{purpose:"authenticate", did, audience, timestamp}` with its
   * key. The audience binds the signature to this registry; each signed message is exchanged once.
   * Until LEGACY_AUTH_UNTIL the earlier message without `audience` is taken too, by the same rules.
   */
  async tokenForSignature(request: TokenRequest): Promise<IssuedSession> {
    const { audience } = this.deps;
    const did = requireDid(request.did, this.deps.didWebDomain).did;
    if (request.audience !== undefined && request.audience !== audience) {
      throw new UnauthorizedError(
        'AUDIENCE_MISMATCH',
        `audience "${request.audience.slice(0, 200)}" names another registry; this one is "${audience}"`,
      );
    }
    const now = this.deps.clock.now();
    assertAuthenticationTimestamp(request.timestamp, now);
    const agent = await findActiveAgent(this.deps.db, did);
    if (agent === undefined) throw agentNotFound(did);
    // The stored key passed every check, on-curve included, when it registered.
    const key =
      agent.key_type === 'ed25519'
        ? parseEd25519KeyQuickly(agent.public_key)
        : parsePublicKey(agent.key_type, agent.public_key);
    // The agent signs the DID exactly as it sent it, so verify over that spelling.
    let message = authenticationMessage(agent.key_type, {
      did: request.did,
      audience,
      timestamp: request.timestamp,
    });
    let withoutAudience = false;
    if (!(await signatureCoversAny(key, [message], request.signature))) {
      const earlier = loginMessageWithoutAudience(agent.key_type, request.did, request.timestamp);
      if (!(await signatureCoversAny(key, [earlier], request.signature))) {
        throw new UnauthorizedError(
          'INVALID_SIGNATURE',
          `signature does not verify for ${did} over ${agent.key_type === 'ed25519' ? 'the canonical JSON' : 'the EIP-191 personal_sign text'} of {purpose:"authenticate", did, audience:"${audience}", timestamp}; the exact text is in ${SIGNING_DOC.authentication}`,
        );
      }
      this.assertWindowOpen('login_without_audience');
      message = earlier;
      withoutAudience = true;
    }
    // Keyed by the signed text, not the signature bytes: an ECDSA signature can be re-encoded (high S)
    // without the key, and that must not make a captured login usable twice.
    const digest = createHash('sha256').update(message).digest('hex');
    if (
      !(await claimSignatureUse(this.deps.db, digest, request.timestamp + AUTHENTICATION_MAX_AGE_MS, now))
    ) {
      throw new UnauthorizedError(
        'SIGNATURE_REUSED',
        'this signed authentication message was already exchanged for a token; sign a new one with a fresh timestamp',
      );
    }
    const issued = await this.deps.tokens.issue(did, Number(agent.key_generation));
    const session = { did, token: issued.token, expires_at: issued.expiresAt };
    if (!withoutAudience) return session;
    this.deps.telemetry.deprecatedAuthentication({ form: 'login_without_audience', accepted: true });
    return { ...session, deprecated: 'login_without_audience' };
  }
}
