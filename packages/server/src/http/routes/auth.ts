import type { AppContext } from '../../context.js';
import { TokenRequest, TokenResponse } from '../schemas/agents.js';
import { errors, ref } from '../schemas/common.js';
import { Jwks } from '../schemas/discovery.js';
import type { App } from '../types.js';

export function authRoutes(app: App, ctx: AppContext): void {
  app.post(
    '/api/auth/token',
    {
      schema: {
        tags: ['Auth'],
        operationId: 'issueToken',
        summary: 'Get a fresh token by signing {purpose:"authenticate", did, timestamp} with the agent key',
        security: [],
        'x-status-reasons': {
          200: 'A new bearer token.',
          400: 'A field is invalid or the timestamp is more than 5 minutes away (`TIMESTAMP_OUT_OF_RANGE`).',
          401: 'The signature does not verify with the agent key (`INVALID_SIGNATURE`).',
          404: 'No active agent has this DID (`AGENT_NOT_FOUND`).',
        },
        description:
          'Uses the message rules of registration for the agent key type: canonical JSON for Ed25519, ' +
          'EIP-191 personal_sign over the JSON in the order purpose, did, timestamp for secp256k1.',
        body: TokenRequest,
        response: { 200: ref(TokenResponse), ...errors(400, 401, 404) },
      },
    },
    async (request) => ctx.authentication.tokenForSignature(request.body),
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
