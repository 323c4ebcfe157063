import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { App } from '../../http/types.js';
import { refuseUnknownQuery } from '../../http/query.js';
import { ARD_BASE, CATALOG_TYPE } from '../../modules/ard/entries.js';
import { handleArdError, handleArdNotFound } from './errors.js';
import {
  ArdCatalogAnswer,
  ArdEntryAnswer,
  ArdError,
  ArdExploreAnswer,
  ArdListAnswer,
  ArdSearchAnswer,
} from './envelopes.js';
import {
  ArdCatalogQuery,
  ArdExploreRequest,
  ArdIdentifierParams,
  ArdListQuery,
  ArdSearchRequest,
} from '../../modules/ard/schemas.js';

/** How many catalog pages are kept: a crawler walks them in turn, and a token names one position. */
const CATALOG_CACHE_ENTRIES = 256;
const CATALOG_CACHE_CONTROL = 'public, max-age=5';
const JSON_TYPE = 'application/json; charset=utf-8';
const ardErrors = {
  400: {
    ...ArdError,
    description: 'Malformed request: errorCode INVALID_ARGUMENT, message says what to fix',
  },
  404: {
    ...ArdError,
    description: 'No such entry, or a route the ARD API does not have: errorCode NOT_FOUND',
  },
};

interface CachedDocument {
  body: string;
  etag: string;
  /** The change feed's head it was built at: no agent has changed while the head stays there. */
  head: number;
}

/**
 * Catalog pages, kept while no agent changes (the change feed's head, one row read, says so): a
 * crawler re-reading them costs no rendering, and a page never shows an agent as it was before a change.
 */
class DocumentCache {
  private readonly documents = new Map<string, CachedDocument>();

  async get(key: string, head: number, build: () => Promise<string>): Promise<CachedDocument> {
    const cached = this.documents.get(key);
    if (cached !== undefined && cached.head === head) return cached;
    const body = await build();
    const document = { body, etag: etagOf(body), head };
    if (this.documents.size >= CATALOG_CACHE_ENTRIES) this.documents.clear();
    this.documents.set(key, document);
    return document;
  }
}

function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}

function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  document: CachedDocument,
  type: string,
): FastifyReply {
  void reply.header('etag', document.etag).header('cache-control', CATALOG_CACHE_CONTROL);
  if (request.headers['if-none-match'] === document.etag) return reply.status(304).send();
  return reply.type(type).send(document.body);
}

/** The home page's Link header: where ARD crawlers find the publisher files (RFC 8288). */
export function ardLinks(publicUrl: string): string {
  return (
    `<${publicUrl}/.well-known/ai-catalog.json>; rel="ai-catalog"; type="${CATALOG_TYPE}", ` +
    `<${publicUrl}/.well-known/ard.json>; rel="ard"; type="application/json"`
  );
}

/**
 * Agentic Resource Discovery (docs/ard.md): the publisher files at /.well-known, and the registry API
 * under /ard with ARD's error envelope on every answer, malformed JSON and unknown routes included.
 */
export async function ardRoutes(app: App, ctx: AppContext): Promise<void> {
  const { publicUrl } = ctx.config.identity;
  const { ard } = ctx;
  const cache = new DocumentCache();
  const links = ardLinks(publicUrl);

  app.addHook('onRequest', (request, reply, done) => {
    if (request.url === '/' || request.url.startsWith('/?')) void reply.header('link', links);
    done();
  });
  // The publisher file names the search service and the first catalog page, never an agent: it
  // depends on the configuration only, so it is written once.
  const manifestBody = JSON.stringify(ard.manifest());
  const manifest: CachedDocument = { body: manifestBody, etag: etagOf(manifestBody), head: 0 };
  app.get('/.well-known/ai-catalog.json', { schema: { hide: true } }, async (request, reply) =>
    sendDocument(request, reply, manifest, CATALOG_TYPE),
  );
  app.get('/.well-known/ard.json', { schema: { hide: true } }, async (request, reply) =>
    sendDocument(request, reply, manifest, JSON_TYPE),
  );

  await app.register(
    async (api: App) => {
      api.setErrorHandler(handleArdError);
      api.setNotFoundHandler(handleArdNotFound);

      api.post(
        '/search',
        {
          schema: {
            tags: ['ARD'],
            operationId: 'ardSearch',
            summary:
              'ARD search: active agents by text and filter, each as an ARD entry with score and source',
            description:
              'The same index and search service as GET /api/agents/search: query.text is its q; filter keys type, tags (any of), capabilities (one), publisher, trustManifest.identityType and trustManifest.attestations.type; pageSize and pageToken page on. federation referrals adds the registries the operator configured (ARD_REFERRALS), if any.',
            security: [],
            body: ArdSearchRequest,
            response: { 200: ArdSearchAnswer, ...ardErrors },
          },
        },
        async (request, reply) => reply.type(JSON_TYPE).send((await ard.search(request.body)) as never),
      );

      api.post(
        '/explore',
        {
          schema: {
            tags: ['ARD'],
            operationId: 'ardExplore',
            summary:
              'ARD explore: facet counts (type, publisher, tags, capabilities) over the matched agents',
            security: [],
            body: ArdExploreRequest,
            response: { 200: ArdExploreAnswer, ...ardErrors },
          },
        },
        async (request, reply) =>
          reply.type(JSON_TYPE).send(JSON.stringify(await ard.explore(request.body)) as never),
      );

      api.get(
        '/agents',
        {
          preValidation: refuseUnknownQuery(ArdListQuery),
          schema: {
            tags: ['ARD'],
            operationId: 'ardListAgents',
            summary: 'ARD list: every active agent as an ARD entry, oldest first, paged by pageToken',
            security: [],
            querystring: ArdListQuery,
            response: { 200: ArdListAnswer, ...ardErrors },
          },
        },
        async (request, reply) => reply.type(JSON_TYPE).send((await ard.list(request.query)) as never),
      );

      api.get(
        '/agents/:identifier',
        {
          schema: {
            tags: ['ARD'],
            operationId: 'ardGetAgent',
            summary: 'ARD entry of one active agent by its URN (urn:air:<host>:agents:<name>)',
            security: [],
            params: ArdIdentifierParams,
            response: { 200: ArdEntryAnswer, ...ardErrors },
          },
        },
        async (request, reply) =>
          reply.type(JSON_TYPE).send((await ard.entry(request.params.identifier)) as never),
      );

      api.get(
        '/catalog',
        {
          preValidation: refuseUnknownQuery(ArdCatalogQuery),
          schema: {
            tags: ['ARD'],
            operationId: 'ardCatalogPage',
            summary:
              'One page of the published AI Catalog: up to 100 agents and the next page as a nested catalog',
            security: [],
            querystring: ArdCatalogQuery,
            response: { 200: ArdCatalogAnswer, ...ardErrors },
          },
        },
        async (request, reply) => {
          const token = request.query.pageToken;
          const head = await ard.changeHead();
          const document = await cache.get(`catalog:${token ?? ''}`, head, () => ard.catalogPage(token));
          return sendDocument(request, reply, document, CATALOG_TYPE);
        },
      );
    },
    { prefix: ARD_BASE },
  );
}
