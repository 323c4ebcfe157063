import type { AppContext } from '../../context.js';
import { TokenRequest, TokenResponse } from '../schemas/agents.js';
import { errors } from '../schemas/common.js';
import { Jwks } from '../schemas/discovery.js';
import type { App } from '../types.js';

export function authRoutes(app: App, ctx: AppContext): void {
  app.post(
    '/api/auth/token',
    {
      schema: {
        tags: ['Auth'],
        summary: 'Get a fresh token by signing {purpose:"authenticate", did, timestamp} with the agent key',
        description:
          'Uses the message rules of registration for the agent key type: canonical JSON for Ed25519, ' +
          'EIP-191 personal_sign over the JSON in the order purpose, did, timestamp for secp256k1.',
        body: TokenRequest,
        response: { 200: TokenResponse, ...errors(400, 401, 404) },
      },
    },
    async (request) => ctx.authentication.tokenForSignature(request.body),
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['Auth'],
        summary: 'Public keys that verify registry tokens (JWKS)',
        response: { 200: Jwks },
      },
    },
    async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=300');
      return ctx.tokens.jwks;
    },
  );
}
