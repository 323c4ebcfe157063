import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchema } from '../schemas.js';
import type { FaceTool } from './tool.js';

/** What an MCP endpoint serves, whichever protocol revision the client speaks. */
export interface McpFace {
  name: string;
  version: string;
  instructions: string;
  tools: FaceTool[];
}

/** The revision served statelessly beside the 2025 ones (the SDK names it in discover and its errors). */
export const MODERN_REVISION = '2026-07-28';

const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** Every tool schema is a TypeBox object schema; the v2 types want that said, so it is checked once. */
function objectSchema(schema: JsonSchema): Tool['inputSchema'] {
  if (schema.type !== 'object') throw new Error('an MCP tool schema must be an object schema');
  return schema as Tool['inputSchema'];
}

/** A tool as tools/list lists it: its definition without the code that runs it. */
function listed({ call: _call, ...definition }: FaceTool): Tool {
  const { outputSchema } = definition;
  return {
    ...definition,
    inputSchema: objectSchema(definition.inputSchema),
    ...(outputSchema === undefined ? {} : { outputSchema: objectSchema(outputSchema) }),
  };
}

/** The text of an unknown-tool error, the same for both revisions. */
export function unknownToolMessage(name: string, tools: FaceTool[]): string {
  const names = tools.map((candidate) => candidate.name).join(', ') || 'none';
  return `Unknown tool "${name}"; tools: ${names}`;
}

/**
 * The Fastify request's URL and headers as the web Request the v2 SDK classifies and serves. It has
 * no body: Fastify has parsed it already and it is handed over as `parsedBody`, so a 2025 request
 * (which goes no further than the classification) costs no second serialisation.
 */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(`http://${request.hostname || 'localhost'}${request.url}`, { method: 'POST', headers });
}

/**
 * Whether a POST speaks the 2025 protocol (no per-request `_meta` envelope claim): the SDK's own
 * classification, so the registry never disagrees with the entry that serves the modern revision.
 */
export async function isLegacyMcp(request: FastifyRequest): Promise<{ legacy: boolean; web: Request }> {
  const web = webRequest(request);
  return { legacy: await isLegacyRequest(web, request.body ?? null), web };
}

/**
 * The same tools, read from the same definitions as the 2025 server in routes.ts, on the v2 SDK's
 * low-level server: only the protocol framing differs.
 */
function modernServer(face: McpFace, request: FastifyRequest): Server {
  const server = new Server(
    { name: face.name, version: face.version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: face.instructions,
      jsonSchemaValidator,
    },
  );
  server.setRequestHandler('tools/list', () => ({ tools: face.tools.map(listed) }));
  server.setRequestHandler('tools/call', async (call, ctx): Promise<CallToolResult> => {
    const tool = face.tools.find((candidate) => candidate.name === call.params.name);
    if (tool === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        unknownToolMessage(call.params.name, face.tools),
      );
    }
    return tool.call(call.params.arguments, {
      caller: request.caller,
      address: request.ip,
      signal: ctx.mcpReq.signal,
      log: request.log,
      requestId: request.id,
    });
  });
  return server;
}

/**
 * Serves one 2026-07-28 request: a strict modern entry (2025 traffic never reaches it; routes.ts
 * sends that to the 2025 server unchanged). The default response mode answers one JSON body, since
 * no tool sends anything before its result ('json' would say so in a warning on every request).
 */
export async function answerModern(
  request: FastifyRequest,
  reply: FastifyReply,
  web: Request,
  face: McpFace,
): Promise<void> {
  const handler = createMcpHandler(() => modernServer(face, request), {
    legacy: 'reject',
    onerror: (error) => request.log.debug({ err: error }, 'MCP request refused'),
  });
  // Were a stream to stay open (subscriptions/listen), closing the handler when the client leaves
  // ends it and frees its subscription.
  reply.raw.once('close', () => void handler.close());
  const response = await handler.fetch(web, { parsedBody: request.body ?? null });
  reply.status(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  await reply.send(response.body ?? undefined);
}
