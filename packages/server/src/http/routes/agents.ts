import type { AppContext } from '../../context.js';
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
} from '../schemas/agents.js';
import { DidParams, bearerAuth, errors } from '../schemas/common.js';
import type { App } from '../types.js';
import { authenticated, callerOf } from '../authenticate.js';

const tags = ['Agents'];

export function agentRoutes(app: App, ctx: AppContext): void {
  app.post(
    '/api/agents/register',
    {
      schema: {
        tags,
        summary: 'Register an agent by proving control of its key',
        description:
          'The signature covers the message of the interface, section 5: canonical JSON (RFC 8785) for Ed25519, ' +
          'EIP-191 personal_sign over JSON in a fixed member order for secp256k1. The exact bytes, with worked ' +
          'examples for both key types: docs/signing.md in the repository, sections "Registration with an ' +
          'Ed25519 key" and "Registration with a secp256k1 key". Send "audience" (this registry\'s origin) to bind ' +
          'the registration to this registry (section "Audience").',
        body: RegisterRequest,
        response: { 201: TokenResponse, ...errors(400, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.status(201).send(await ctx.registration.register(request.body)),
  );

  app.get(
    '/api/agents/:did',
    {
      schema: {
        tags,
        summary: 'Read an agent profile',
        params: DidParams,
        response: { 200: AgentProfile, ...errors(400, 404) },
      },
    },
    async (request) => ctx.agents.getProfile(request.params.did),
  );

  app.put(
    '/api/agents/:did',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        summary: 'Update your own profile (absent or null fields stay unchanged)',
        security: bearerAuth,
        params: DidParams,
        body: UpdateProfileRequest,
        response: { 200: AgentProfile, ...errors(400, 401, 403, 404) },
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
        summary: 'Deactivate your own agent (soft delete)',
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
        summary: 'Read whether and how an agent accepts invocations',
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
        summary: 'Configure invocation of your own agent',
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
        summary: 'Payment address of a did:pkh agent',
        params: DidParams,
        response: { 200: PaymentAddress, ...errors(400, 404) },
      },
    },
    async (request) => ctx.agents.paymentAddress(request.params.did),
  );
}
