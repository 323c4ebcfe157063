import type { AgentService } from './agents.js';
import type { RegistrationService } from './registration.js';
import {
  AgentProfile,
  DeactivateResponse,
  InvocationConfig,
  OwnerInvocationConfig,
  PaymentAddress,
  RegisterRequest,
  TokenResponse,
  UpdateInvocationConfigRequest,
  UpdateProfileRequest,
} from './schemas.js';
import { DidParams, bearerAuth, errors, ref } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import { authenticated, callerOf, type AuthenticatedRouteDeps } from './authenticate.js';

const tags = ['Agents'];

/** What the agent routes use of the context. */
export interface AgentRouteDeps extends AuthenticatedRouteDeps {
  agents: AgentService;
  registration: RegistrationService;
}

export function agentRoutes(app: App, ctx: AgentRouteDeps): void {
  app.post(
    '/api/agents/register',
    {
      schema: {
        tags,
        operationId: 'registerAgent',
        summary: 'Register an agent by proving control of its key',
        description:
          'Creates an agent from its public key, profile, a millisecond timestamp and a signature, and returns ' +
          'its DID and a token. Ed25519 keys get a did:web DID; secp256k1 keys with a chain_id get a did:pkh DID. ' +
          'The signature covers the message of the interface, section 5: canonical JSON (RFC 8785) for Ed25519, ' +
          'EIP-191 personal_sign over JSON in a fixed member order for secp256k1. The exact bytes, with worked ' +
          'examples for both key types: docs/signing.md in the repository, sections "Registration with an ' +
          'Ed25519 key" and "Registration with a secp256k1 key". Send "audience" (this registry\'s origin) to bind ' +
          'the registration to this registry (section "Audience").',
        security: [],
        body: ref(RegisterRequest),
        'x-rate-limited': true,
        'x-status-reasons': {
          201: 'Registered: the DID and a bearer token.',
          400: 'A field is invalid (public_key with a 0x prefix, a chain_id missing for secp256k1, a timestamp more than 5 minutes away, a profile rule, a profile over PROFILE_MAX_KB as stored: `PROFILE_TOO_LARGE`) or the signature does not verify (`INVALID_SIGNATURE`; docs/signing.md gives the exact bytes).',
          409: 'An agent with this public key is already registered (`PUBLIC_KEY_EXISTS`); get a token with POST /api/auth/token.',
          429: 'More registrations than REGISTRATION_RATE_LIMIT from this client address, or REGISTRATION_PREFIX_RATE_LIMIT from its network (/24 IPv4, /64 IPv6), in the window (`REGISTRATION_RATE_LIMITED`); retry after Retry-After seconds.',
        },
        response: { 201: ref(TokenResponse), ...errors(400, 409, 413, 415, 429) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await ctx.registration.register(request.body, { address: request.ip })),
  );

  app.get(
    '/api/agents/:did',
    {
      schema: {
        tags,
        operationId: 'getAgent',
        summary: 'Read an agent profile',
        description:
          'The public profile of an agent; deactivated agents stay readable with status "deactivated". ' +
          '`provenance` says it is registered here; the transparency log leaf does not cover it.',
        params: DidParams,
        'x-status-reasons': {
          400: 'The DID is malformed (`INVALID_DID`).',
          404: 'No agent has this DID (`AGENT_NOT_FOUND`), or it is listed here from another registry (`AGENT_IS_REMOTE`: `home_registry` names the registry it lives at, `remote_entry` its entry here).',
        },
        response: { 200: ref(AgentProfile), ...errors(400, 404) },
      },
    },
    // The body comes serialised by the route's own response serializer, from the profile cache when the
    // agent has not changed; Fastify sends a string with a JSON content type as it is (the type provider
    // only knows the object form, hence the cast).
    async (request, reply) => {
      const body = await ctx.agents.getProfileBody(
        request.params.did,
        (profile) => reply.serialize(profile) as string,
      );
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );

  app.put(
    '/api/agents/:did',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'updateAgent',
        summary: 'Update your own profile (absent or null fields stay unchanged)',
        description: "Changes the fields given of the calling agent's profile and returns the whole profile.",
        security: bearerAuth,
        params: DidParams,
        body: UpdateProfileRequest,
        'x-status-reasons': {
          400: 'A body field is missing, malformed or out of range, or breaks a profile rule (`details` names it), or the profile would take more than PROFILE_MAX_KB as stored after the update (`PROFILE_TOO_LARGE`).',
          403: "The DID is another agent's (`NOT_OWNER`).",
          404: 'No active agent has this DID (`AGENT_NOT_FOUND`).',
        },
        response: { 200: ref(AgentProfile), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.agents.updateProfile(caller, request.params.did, request.body);
    },
  );

  app.delete(
    '/api/agents/:did',
    {
      onRequest: authenticated(ctx, { allowDeactivatedSelf: true }),
      schema: {
        tags,
        operationId: 'deactivateAgent',
        summary: 'Deactivate your own agent (soft delete)',
        description:
          'Marks the calling agent deactivated: it leaves search, cannot be invoked and its tokens stop working; ' +
          'its profile and reviews stay readable.',
        'x-status-reasons': {
          403: "The DID is another agent's (`NOT_OWNER`).",
          404: 'No active agent has this DID, e.g. it is already deactivated (`AGENT_NOT_FOUND`).',
        },
        security: bearerAuth,
        params: DidParams,
        response: { 200: DeactivateResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      return ctx.agents.deactivate(callerOf(request), request.params.did);
    },
  );

  app.get(
    '/api/agents/:did/invocation',
    {
      schema: {
        tags,
        operationId: 'getInvocationConfig',
        summary: 'Read whether and how an agent accepts invocations',
        description: 'Whether the agent accepts invocations and how it receives them (webhook or queue).',
        'x-status-reasons': { 404: 'No active agent has this DID (`AGENT_NOT_FOUND`).' },
        params: DidParams,
        response: { 200: InvocationConfig, ...errors(400, 404) },
      },
    },
    async (request) => ctx.agents.getInvocationConfig(request.params.did),
  );

  app.put(
    '/api/agents/:did/invocation',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'updateInvocationConfig',
        summary: 'Configure invocation of your own agent',
        description:
          'Turns invocation on or off and chooses delivery: webhook (the registry POSTs each task, signed per ' +
          'Standard Webhooks; docs/webhooks.md) or queue (the agent polls GET /api/agent/tasks). A generated ' +
          'webhook_secret is returned once.',
        'x-status-reasons': {
          400: 'A field is invalid: webhook_url missing for webhook mode (`WEBHOOK_URL_REQUIRED`), on loopback or a private network (`WEBHOOK_URL_FORBIDDEN`; the operator setting ALLOW_PRIVATE_NETWORKS allows it for local development), or a weak webhook_secret.',
          403: "The DID is another agent's (`NOT_OWNER`).",
          404: 'No active agent has this DID (`AGENT_NOT_FOUND`).',
        },
        security: bearerAuth,
        params: DidParams,
        body: UpdateInvocationConfigRequest,
        response: { 200: OwnerInvocationConfig, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.agents.updateInvocationConfig(caller, request.params.did, request.body);
    },
  );

  app.get(
    '/api/agents/:did/payment-address',
    {
      schema: {
        tags,
        operationId: 'getPaymentAddress',
        summary: 'Payment address of a did:pkh agent',
        description: 'The chain and address of a did:pkh agent, taken from its DID.',
        'x-status-reasons': {
          404: 'No active agent has this DID (`AGENT_NOT_FOUND`), or it is a did:web agent without an address (`PAYMENT_ADDRESS_UNAVAILABLE`).',
        },
        params: DidParams,
        response: { 200: PaymentAddress, ...errors(400, 404) },
      },
    },
    async (request) => ctx.agents.paymentAddress(request.params.did),
  );
}
