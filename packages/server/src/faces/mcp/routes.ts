import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AppContext } from '../../context.js';
import { agentNotFound, agentSuspended } from '../../kernel/errors.js';
import { markIfDeprecated } from '../../modules/agents/authenticate.js';
import { DidParams } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import { TASK_LIMITS } from '../../modules/tasks/task-limits.js';
import { invocable } from '../invocation.js';
import { agentTools } from './agent-tools.js';
import { mcpOriginGuard } from './origin.js';
import { registryTools } from './registry-tools.js';
import { serverCardRoutes } from './server-card.js';
import { answerModern, isLegacyMcp, unknownToolMessage, type McpFace } from './modern.js';

const SERVER_VERSION = '0.1.0';
/** One for every per-request server: the SDK would otherwise build a new Ajv (about 1 ms) per request. */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * A bad token is refused at the HTTP level (401, as MCP's authorization rules ask); no token is fine
 * until a tool that acts as an agent is called, which then answers a tool error saying what to send.
 */
function optionalCaller(ctx: AppContext): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const header = request.headers.authorization;
    request.caller = header === undefined ? null : await ctx.authentication.authenticate(header);
    markIfDeprecated(ctx, reply, request.caller?.deprecated);
  };
}

/**
 * A JSON-RPC invalid-params error whose message is the text alone: McpError would put "MCP error
 * -32602: " in the message, and the SDK client adds that prefix again when it raises the error.
 */
function invalidParams(message: string): McpError {
  const error = new McpError(ErrorCode.InvalidParams, message);
  error.message = message;
  return error;
}

function mcpServer({ name, version, instructions, tools }: McpFace, request: FastifyRequest): Server {
  const server = new Server(
    { name, version },
    { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ call: _call, ...definition }) => definition),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const tool = tools.find((candidate) => candidate.name === call.params.name);
    if (tool === undefined) {
      throw invalidParams(unknownToolMessage(call.params.name, tools));
    }
    return tool.call(call.params.arguments, {
      caller: request.caller,
      address: request.ip,
      signal: extra.signal,
      log: request.log,
      requestId: request.id,
    });
  });
  return server;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with the params of a tools/call message, in the registry's words. The SDK would refuse
 * them too, but as an internal error (-32603) carrying its validator's dump.
 */
function badToolCallParams(message: unknown): string | undefined {
  if (!isPlainObject(message) || message.method !== 'tools/call' || !('id' in message)) return undefined;
  const { params } = message;
  if (!isPlainObject(params))
    return 'params must be an object: {"name": "<tool name>", "arguments": {...}} (see tools/list)';
  if (typeof params.name !== 'string')
    return 'params.name must be the name of a tool, as a string (see tools/list)';
  if (params.arguments !== undefined && !isPlainObject(params.arguments))
    return `params.arguments must be a JSON object of the tool's input (see its inputSchema in tools/list), not ${Array.isArray(params.arguments) ? 'an array' : params.arguments === null ? 'null' : `a ${typeof params.arguments}`}`;
  return undefined;
}

/** JSON-RPC errors (-32602) for malformed tools/call messages of a body, or undefined when it has none. */
function invalidToolCalls(body: unknown): unknown {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.every((message) => badToolCallParams(message) === undefined)) return undefined;
  // A batch is answered as a whole: its other requests are refused with it, not half run.
  const errors = messages
    .filter((message): message is Record<string, unknown> => isPlainObject(message) && 'id' in message)
    .map((message) => ({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: ErrorCode.InvalidParams,
        message: badToolCallParams(message) ?? 'not run: another tools/call in this batch has invalid params',
      },
    }));
  return Array.isArray(body) ? errors : errors[0];
}

/**
 * A POST naming the 2026-07-28 revision in its per-request `_meta` envelope is served by the v2 SDK
 * (modern.ts); every other one by the 2025 server here, as before. Either way a fresh server per
 * POST, so any node of the registry can answer any request.
 */
async function answer(request: FastifyRequest, reply: FastifyReply, face: McpFace): Promise<void> {
  // Both eras frame a JSON-RPC error alike, so a malformed tools/call gets the same words in either.
  const refused = invalidToolCalls(request.body);
  if (refused !== undefined) {
    await reply.type('application/json').send(refused);
    return;
  }
  const { legacy, web } = await isLegacyMcp(request);
  if (!legacy) {
    await answerModern(request, reply, web, face);
    return;
  }
  const server = mcpServer(face, request);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  reply.raw.once('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  // Headers set by hooks (CORS, x-request-id) would be lost once the transport owns the response.
  for (const [header, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(header, value);
  }
  reply.raw.setHeader('x-request-id', request.id);
  reply.hijack();
  await transport.handleRequest(request.raw, reply.raw, request.body);
}

function methodNotAllowed(_request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.status(405).header('allow', 'POST').send({
    error: 'Method not allowed',
    details: 'This MCP endpoint is stateless Streamable HTTP: send JSON-RPC messages with POST',
    code: 'METHOD_NOT_ALLOWED',
  });
}

export function mcpRoutes(app: App, ctx: AppContext): void {
  const tools = registryTools(ctx);
  const common = {
    // Origin first: a foreign page learns nothing, not even whether its token would have worked.
    onRequest: [mcpOriginGuard(ctx.config), optionalCaller(ctx)],
    bodyLimit: TASK_LIMITS.invocationBodyLimitBytes,
  };

  app.post('/mcp', { ...common, schema: { hide: true } }, async (request, reply) => {
    await answer(request, reply, {
      name: 'agent-registry',
      version: SERVER_VERSION,
      instructions:
        'An agent registry. Find agents with search_agents, read one with get_agent (capabilities and ' +
        'their JSON schemas), call one with invoke_agent, read that call later with get_task, judge ' +
        'agents with get_reviews and get_reputation, and review one you called with submit_review ' +
        '(citing the task id) or edit_review, and be told of changes with watch. invoke_agent, get_task, ' +
        'submit_review, edit_review and the watch tools act as an agent: they need the header ' +
        'Authorization: Bearer <registry token>.',
      tools,
    });
  });

  app.post(
    '/mcp/agents/:did',
    { ...common, schema: { hide: true, params: DidParams } },
    async (request, reply) => {
      const profile = await ctx.agents.getProfile(request.params.did);
      if (profile.status === 'suspended') throw agentSuspended(profile.did);
      if (profile.status !== 'active') throw agentNotFound(profile.did);
      const instructions = invocable(profile)
        ? `Each tool is a capability of ${profile.name} (${profile.did}), invoked through the registry. ` +
          'Calls need the header Authorization: Bearer <registry token> of the calling agent. Read a ' +
          `call later with get_task, and review the agent with submit_review, at ${ctx.config.identity.publicUrl}/mcp.`
        : `${profile.name} (${profile.did}) does not accept invocations, so it offers no tools.`;
      await answer(request, reply, {
        name: `agent-registry/${profile.name}`,
        version: SERVER_VERSION,
        instructions,
        tools: agentTools(ctx, profile),
      });
    },
  );

  serverCardRoutes(
    app,
    ctx.config.identity.publicUrl,
    SERVER_VERSION,
    tools.map(({ call: _call, ...definition }) => definition),
  );

  for (const url of ['/mcp', '/mcp/agents/:did']) {
    app.get(url, { schema: { hide: true } }, methodNotAllowed);
    app.delete(url, { schema: { hide: true } }, methodNotAllowed);
  }
}
