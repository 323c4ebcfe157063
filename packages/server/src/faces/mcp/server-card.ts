import { createHash } from 'node:crypto';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { toolsDigest } from '@agent-registry/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/types.js';
import { MCP_SERVER_CARD_TYPE } from '../../modules/ard/entries.js';
import { MODERN_REVISION } from './modern.js';

export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
/** The `_meta` key of /.well-known/mcp.json's tools digest (a reverse-DNS prefix, as MCP's `_meta` keys use). */
export const TOOLS_DIGEST_META_KEY = 'io.github.agent-registry/tools_digest';

/** A tool as tools/list lists it. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

/**
 * The server's name in the reverse-DNS form server cards require (`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`):
 * the public host's labels reversed, without a port.
 */
export function serverCardName(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '').replace(/[^a-zA-Z0-9.-]/g, '-');
  return `${host.split('.').reverse().join('.')}/agent-registry`;
}

/** The registry's MCP Server Card (SEP-2127): who it is and where its Streamable HTTP endpoint is. */
export function serverCard(publicUrl: string, version: string): Record<string, unknown> {
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: serverCardName(publicUrl),
    version,
    title: 'Agent Registry',
    description: 'Find, invoke and review AI agents registered with verifiable keys and DIDs',
    websiteUrl: publicUrl,
    remotes: [
      {
        type: 'streamable-http',
        url: `${publicUrl}/mcp`,
        supportedProtocolVersions: [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS],
      },
    ],
  };
}

/**
 * /.well-known/mcp.json: the server card with the tools tools/list answers and their digest (computed as
 * for imported servers' `tools_digest`), for clients that read tools before connecting.
 */
export function wellKnownMcpDocument(
  publicUrl: string,
  version: string,
  tools: readonly ListedTool[],
): Record<string, unknown> {
  return {
    ...serverCard(publicUrl, version),
    tools,
    _meta: { [TOOLS_DIGEST_META_KEY]: toolsDigest(tools) },
  };
}

interface StaticDocument {
  body: string;
  etag: string;
}

function staticDocument(value: unknown): StaticDocument {
  const body = JSON.stringify(value);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
}

/** The headers SEP-2127 asks of a hosted card: any origin may read it, revalidating by ETag. */
function send(
  request: FastifyRequest,
  reply: FastifyReply,
  document: StaticDocument,
  type: string,
): FastifyReply {
  void reply
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', 'GET')
    .header('access-control-allow-headers', 'Content-Type, If-None-Match')
    .header('access-control-expose-headers', 'ETag')
    .header('cache-control', 'public, max-age=3600')
    .header('etag', document.etag);
  if (request.headers['if-none-match'] === document.etag) return reply.status(304).send();
  return reply.type(type).send(document.body);
}

/**
 * The card at SEP-2127's reserved location (`<streamable-http-url>/server-card`, named by the AI Catalog)
 * and /.well-known/mcp.json; both depend on the configuration only, so they are written once.
 */
export function serverCardRoutes(
  app: App,
  publicUrl: string,
  version: string,
  tools: readonly ListedTool[],
): void {
  const card = staticDocument(serverCard(publicUrl, version));
  const wellKnown = staticDocument(wellKnownMcpDocument(publicUrl, version, tools));
  app.get('/mcp/server-card', { schema: { hide: true } }, async (request, reply) =>
    send(request, reply, card, MCP_SERVER_CARD_TYPE),
  );
  app.get('/.well-known/mcp.json', { schema: { hide: true } }, async (request, reply) =>
    send(request, reply, wellKnown, 'application/json; charset=utf-8'),
  );
}
