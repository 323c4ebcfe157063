import { A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { agentNotFound, agentSuspended } from '../../kernel/errors.js';
import { authenticated, callerOf } from '../../modules/agents/authenticate.js';
import { DidParams } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import { TASK_LIMITS } from '../../modules/tasks/task-limits.js';
import { A2A_VERSIONS, a2aAgentCard, registryCard, signCard, type SignedCard } from './cards.js';
import { invalidEnvelope, isUnparseableBody, jsonRpcError, PARSE_ERROR } from './envelope.js';
import { AgentA2AHandler, toA2AError } from './request-handler.js';

const CARD_CACHE_CONTROL = 'public, max-age=300';

/** Signed cards with an ETag; a client that has the card gets 304. */
function sendCard(request: FastifyRequest, reply: FastifyReply, card: SignedCard): FastifyReply {
  void reply.header('etag', card.etag).header('cache-control', CARD_CACHE_CONTROL);
  if (request.headers['if-none-match'] === card.etag) return reply.status(304).send();
  return reply.type('application/json').send(card.body);
}

type JsonRpcAnswer = Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;

function isStream(
  answer: JsonRpcAnswer,
): answer is Extract<JsonRpcAnswer, AsyncGenerator<unknown, void, undefined>> {
  return typeof (answer as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

export function a2aRoutes(app: App, ctx: AppContext): void {
  const { publicUrl } = ctx.config.identity;
  const signingKey = ctx.tokens.signingKey;

  app.get('/.well-known/agent-card.json', { schema: { hide: true } }, async (request, reply) =>
    sendCard(request, reply, await signCard(registryCard(publicUrl), signingKey, publicUrl)),
  );

  const serveAgentCard = async (
    request: FastifyRequest<{ Params: { did: string } }>,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    const profile = await ctx.agents.getProfile(request.params.did);
    if (profile.status === 'suspended') throw agentSuspended(profile.did);
    if (profile.status !== 'active') throw agentNotFound(profile.did);
    return sendCard(request, reply, await signCard(a2aAgentCard(profile, publicUrl), signingKey, publicUrl));
  };
  const cardRoute = { schema: { hide: true, params: DidParams } };
  app.get('/a2a/:did/.well-known/agent-card.json', cardRoute, serveAgentCard);
  // The base itself, with or without the slash, shows the card to a browser or curl.
  app.get('/a2a/:did/', cardRoute, serveAgentCard);
  app.get('/a2a/:did', cardRoute, serveAgentCard);

  const v1 = (handler: AgentA2AHandler) => new JsonRpcTransportHandler(handler);
  const v03 = (handler: AgentA2AHandler) => new LegacyJsonRpcTransportHandler(handler);

  const jsonRpc = async (rawDid: string, request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const controller = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableEnded) controller.abort();
    });
    const call = {
      rawDid,
      caller: callerOf(request),
      address: request.ip,
      clientGone: controller.signal,
      log: request.log,
      requestId: request.id,
    };
    const handler = new AgentA2AHandler(ctx, call);
    // No A2A-Version header means 0.3 (A2A v1.0 section 3.6.2): those clients get the v0.3 method names.
    const version = request.headers[A2A_VERSION_HEADER.toLowerCase()];
    const requested = typeof version === 'string' && version !== '' ? version : '0.3';
    const badEnvelope = invalidEnvelope(request.body);
    if (badEnvelope !== undefined) return badEnvelope;
    const body = request.body as Record<string, unknown>;
    const id = typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
    if (!(A2A_VERSIONS as readonly string[]).includes(requested)) {
      const error = new VersionNotSupportedError(
        `A2A version ${requested} is not supported; send the header A2A-Version: 1.0 (or 0.3)`,
      );
      return { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
    }
    const context = new ServerCallContext({ requestedVersion: requested });
    const legacy = requested === '0.3';
    const answer = await (legacy ? v03(handler) : v1(handler)).handle(body, context);
    if (!isStream(answer)) return answer;
    // Streaming is not offered: the stream fails on its first step, answered as a plain JSON-RPC error.
    try {
      await answer.next();
      await answer.return();
      throw new Error('a streaming method produced an event');
    } catch (error) {
      const mapped = toA2AError(error, call);
      return {
        jsonrpc: '2.0',
        id,
        error: legacy
          ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(mapped)
          : JsonRpcTransportHandler.mapToJSONRPCError(mapped),
      };
    }
  };
  const rpcRoute = {
    onRequest: authenticated(ctx),
    bodyLimit: TASK_LIMITS.invocationBodyLimitBytes,
    schema: { hide: true, params: DidParams },
    // A body that is not JSON is a JSON-RPC parse error; every other refusal (the token first) reads as
    // on every other route.
    errorHandler: (error: unknown, _request: FastifyRequest, reply: FastifyReply) => {
      if (!isUnparseableBody(error)) throw error;
      void reply.status(200).send(jsonRpcError(null, PARSE_ERROR, 'Parse error: the body is not valid JSON'));
    },
  };
  for (const url of ['/a2a/:did/', '/a2a/:did']) {
    app.post(url, rpcRoute, async (request, reply) => jsonRpc(request.params.did, request, reply));
  }
}
