import type { TokenService } from '../identity/tokens.js';
import { markIfDeprecated, type AuthenticatedRouteDeps } from './authenticate.js';
import { Jwks, TokenRequest, TokenResponse } from './schemas.js';
import { errors, ref } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';

/** What the sign-in routes use of the context. */
export interface AuthRouteDeps extends AuthenticatedRouteDeps {
  tokens: TokenService;
}

export function authRoutes(app: App, ctx: AuthRouteDeps): void {
  app.post(
    '/api/auth/token',
    {
      schema: {
        tags: ['Auth'],
        operationId: 'issueToken',
        security: [],
        'x-status-reasons': {
          200: 'A new bearer token.',
          400: 'A field is invalid or the timestamp is more than 5 minutes away (`TIMESTAMP_OUT_OF_RANGE`).',
          401: 'The signature does not verify with the agent key (`INVALID_SIGNATURE`; docs/signing.md gives the exact bytes), or this signed message was already exchanged (`SIGNATURE_REUSED`).',
          404: 'No active agent has this DID (`AGENT_NOT_FOUND`).',
        },
        summary:
          'Get a fresh token by signing {purpose:"authenticate", did, audience, timestamp} with the agent key',
        description:
          "audience is this registry's origin (its PUBLIC_URL), so the signature is good for this registry only. " +
          'Canonical JSON (RFC 8785) for Ed25519; for secp256k1 EIP-191 personal_sign over the JSON in the order ' +
          'purpose, did, audience, timestamp. The timestamp may be 5 minutes old or 60 seconds ahead, and each ' +
          'signed message is exchanged for a token once (401 SIGNATURE_REUSED). The exact bytes, with worked ' +
          'examples: docs/signing.md in the repository, section "Authentication (POST /api/auth/token)".',
        body: TokenRequest,
        response: { 200: ref(TokenResponse), ...errors(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { deprecated, ...session } = await ctx.authentication.tokenForSignature(request.body);
      markIfDeprecated(ctx, reply, deprecated);
      return session;
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['Auth'],
        operationId: 'getJwks',
        summary: 'Public keys that verify registry tokens (JWKS)',
        description: 'The Ed25519 public keys (JWK set) that verify the EdDSA tokens this registry issues.',
        security: [],
        'x-no-database': true,
        response: { 200: Jwks },
      },
    },
    async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=300');
      return ctx.tokens.jwks;
    },
  );
}
