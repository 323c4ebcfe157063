import { DidParams, bearerAuth, errors, ref } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import { refuseUnknownQuery } from '../../http/query.js';
import { authenticated, callerOf, type AuthenticatedRouteDeps } from '../agents/authenticate.js';
import type { AgentService } from '../agents/agents.js';
import { AgentProfile } from '../agents/schemas.js';
import type { DomainService } from './domains.js';
import { AgentDomains, ClaimDomainRequest, DomainParams, HandleQuery, SetHandleRequest } from './schemas.js';

const tags = ['Agents'];

export interface DomainRouteDeps extends AuthenticatedRouteDeps {
  domains: DomainService;
  agents: AgentService;
}

const OWNER_REFUSALS = {
  400: 'The DID is malformed (`INVALID_DID`).',
  403: "The DID is another agent's (`NOT_OWNER`).",
  404: 'No active agent of this registry has this DID (`AGENT_NOT_FOUND`).',
};
const RATE_LIMITED =
  'More domain claims and handle changes than REGISTRATION_RATE_LIMIT from this client address (or its network), or KEY_CHANGE_RATE_LIMIT for this agent, in the window (`IDENTITY_CLAIM_RATE_LIMITED`); retry after Retry-After seconds.';

export function domainRoutes(app: App, ctx: DomainRouteDeps): void {
  app.get(
    '/api/agents/:did/domains',
    {
      schema: {
        tags,
        operationId: 'listAgentDomains',
        summary: "An agent's verified domains and handle",
        description: 'Extension (docs/identity.md, "Domains and handles").',
        params: DidParams,
        'x-status-reasons': { 400: OWNER_REFUSALS[400], 404: OWNER_REFUSALS[404] },
        response: { 200: AgentDomains, ...errors(400, 404) },
      },
    },
    async (request) => ctx.domains.list(request.params.did),
  );

  app.post(
    '/api/agents/:did/domains',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'claimAgentDomain',
        summary: 'Claim a domain by its published proof (checked now, and re-checked on a schedule)',
        description:
          'Extension (docs/identity.md, "Domains and handles"). The registry looks for the DID in ' +
          '`https://<domain>/.well-known/agent-registry.json` (`{"agents": ["did:..."]}`), then in a TXT record ' +
          '`_agent-registry.<domain>` holding `did=<DID>`. A new claim is logged as `domain.claimed`; claiming a ' +
          'verified domain again re-checks it.',
        security: bearerAuth,
        params: DidParams,
        body: ClaimDomainRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          ...OWNER_REFUSALS,
          200: "Proven: the agent's domains and handle.",
          400: `${OWNER_REFUSALS[400]} Or the domain is not a host name of two labels or more, carries a scheme, path, port or IP address (\`INVALID_DOMAIN\`).`,
          409: 'The agent holds the most domains allowed, 10 (`DOMAIN_LIMIT_REACHED`).',
          422: 'Neither proof names the DID (`DOMAIN_PROOF_NOT_FOUND`; `details` says what each lookup found).',
          429: RATE_LIMITED,
        },
        response: { 200: AgentDomains, ...errors(400, 401, 403, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request) =>
      ctx.domains.claim(callerOf(request), request.params.did, request.body.domain, { address: request.ip }),
  );

  app.delete(
    '/api/agents/:did/domains/:domain',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'dropAgentDomain',
        summary: 'Drop a domain claim (and the handle under it)',
        description: 'Extension (docs/identity.md). Logged as `domain.dropped` with reason `dropped`.',
        security: bearerAuth,
        params: DomainParams,
        'x-status-reasons': {
          ...OWNER_REFUSALS,
          400: `${OWNER_REFUSALS[400]} Or the domain is malformed (\`INVALID_DOMAIN\`).`,
          404: `${OWNER_REFUSALS[404]} Or the agent holds no claim on the domain (\`DOMAIN_NOT_CLAIMED\`).`,
        },
        response: { 200: AgentDomains, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => ctx.domains.drop(callerOf(request), request.params.did, request.params.domain),
  );

  app.put(
    '/api/agents/:did/handle',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'setAgentHandle',
        summary: 'Take a readable handle under a verified domain (com.example/translator)',
        description:
          'Extension (docs/identity.md, "Domains and handles"). Unique in this registry; replaces the agent\'s ' +
          'handle if it had one. Logged as `handle.changed`.',
        security: bearerAuth,
        params: DidParams,
        body: SetHandleRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          ...OWNER_REFUSALS,
          400: `${OWNER_REFUSALS[400]} Or the handle is not <reverse-DNS>/<name> (\`INVALID_HANDLE\`).`,
          409: "The handle's domain is not a verified domain of the agent (`HANDLE_DOMAIN_NOT_VERIFIED`), or another agent has the handle (`HANDLE_TAKEN`).",
          429: RATE_LIMITED,
        },
        response: { 200: AgentDomains, ...errors(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request) =>
      ctx.domains.setHandle(callerOf(request), request.params.did, request.body.handle, {
        address: request.ip,
      }),
  );

  app.delete(
    '/api/agents/:did/handle',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'clearAgentHandle',
        summary: "Give up the agent's handle",
        description: 'Extension (docs/identity.md). Logged as `handle.changed` with handle null.',
        security: bearerAuth,
        params: DidParams,
        'x-status-reasons': {
          ...OWNER_REFUSALS,
          404: `${OWNER_REFUSALS[404]} Or the agent has no handle (\`HANDLE_NOT_FOUND\`).`,
        },
        response: { 200: AgentDomains, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => ctx.domains.clearHandle(callerOf(request), request.params.did),
  );

  app.get(
    '/api/agents/by-handle',
    {
      preValidation: refuseUnknownQuery(HandleQuery),
      schema: {
        tags,
        operationId: 'getAgentByHandle',
        summary: 'Read the profile of the agent with a handle',
        description:
          'Extension (docs/identity.md): `/api/agents/by-handle?handle=com.example/translator` answers as ' +
          '`GET /api/agents/{did}` does for the agent holding `com.example/translator`.',
        querystring: HandleQuery,
        'x-status-reasons': {
          400: 'The handle is malformed (`INVALID_HANDLE`).',
          404: 'No agent has this handle (`HANDLE_NOT_FOUND`).',
        },
        response: { 200: ref(AgentProfile), ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      const did = await ctx.domains.resolveHandle(request.query.handle);
      const body = await ctx.agents.getProfileBody(did, (profile) => reply.serialize(profile) as string);
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );
}
