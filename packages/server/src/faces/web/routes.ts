import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { ApiError, NotFoundError } from '../../kernel/errors.js';
import { classifyError, logClassified } from '../errors.js';
import { parseSearchArguments } from '../search-arguments.js';
import { handleNotFound } from '../rest/error-handler.js';
import type { App } from '../../http/types.js';
import { SIGNING_ROUTE } from '../../modules/identity/deprecation-headers.js';
import type { DidDocument } from '../../modules/identity/schemas.js';
import { loadWebAssets, type Asset, type WebAssets } from './assets.js';
import { renderPage, type PageFrame } from './layout.js';
import { renderMarkdown } from './markdown.js';
import { REVIEWS_PAGE_SIZE, renderAgent } from './pages/agent.js';
import { renderHome, searchArgumentsOf, type HomeView, type SearchForm } from './pages/home.js';
import { renderJoin } from './pages/join.js';
import { renderMessage } from './pages/message.js';
import { renderStats } from './pages/stats.js';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';

/**
 * Pages may load scripts, styles and images from this origin only (avatars excepted: an agent's
 * http(s) avatar is fetched by the visitor's browser, never by the registry), and talk to this origin.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: http:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The signing document, served from the repository's docs/ when this build has it. */
const SIGNING_DOC = fileURLToPath(new URL('../../../../../docs/signing.md', import.meta.url));

const hidden = { schema: { hide: true } } as const;

function firstText(value: unknown): string {
  if (Array.isArray(value)) return firstText(value[0]);
  return typeof value === 'string' ? value : '';
}

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return typeof request.query === 'object' && request.query !== null
    ? (request.query as Record<string, unknown>)
    : {};
}

function offsetOf(raw: string, max: number): number {
  const value = Number.parseInt(raw, 10);
  return Number.isFinite(value) && value > 0 ? Math.min(value, max) : 0;
}

function sendPage(reply: FastifyReply, assets: WebAssets, frame: PageFrame, status = 200): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'strict-origin-when-cross-origin')
    .send(renderPage(assets, frame));
}

/** Browsers asking for a page get HTML; API clients (and every /api path) keep the JSON error. */
export function wantsHtml(request: FastifyRequest): boolean {
  const path = request.url.split('?')[0] ?? '';
  if (/^\/(api|mcp|a2a|\.well-known)(\/|$)/.test(path)) return false;
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  return (request.headers.accept ?? '').includes('text/html');
}

/** Which agent a page is about: a DID, or a handle (docs/identity.md, "Domains and handles"). */
type AgentRef = { did: string; handle?: undefined } | { handle: string };

/** The web pages: a thin adapter over the same services the REST routes call. */
export function webRoutes(app: App, ctx: AppContext): void {
  const assets = loadWebAssets();
  const signing = existsSync(SIGNING_DOC) ? readFileSync(SIGNING_DOC, 'utf8') : undefined;
  const signingHref = signing === undefined ? undefined : SIGNING_ROUTE;
  const publicUrl = ctx.config.identity.publicUrl;

  const notFoundPage = (reply: FastifyReply, message: string) =>
    sendPage(reply, assets, { title: 'Not found', body: renderMessage('Not found', message) }, 404);

  app.setNotFoundHandler((request, reply) => {
    if (wantsHtml(request)) {
      return notFoundPage(reply, `There is no page at ${request.url.split('?')[0] ?? '/'}.`);
    }
    return handleNotFound(request, reply);
  });

  for (const asset of [assets.css, assets.script, assets.logo] satisfies Asset[]) {
    app.get(asset.path, hidden, (_request, reply) =>
      reply
        .header('content-type', asset.contentType)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(asset.body),
    );
  }

  app.register(async (pages) => {
    // Errors on pages become an HTML page with the same status; the REST error handler stays JSON.
    pages.setErrorHandler((error, request, reply) => {
      const classified = classifyError(error, { requestId: request.id });
      logClassified(request.log, classified, 'page failed');
      const { status } = classified;
      const message =
        status < 500
          ? classified.details
          : `The registry could not show this page right now (request id ${request.id}).`;
      const heading =
        status === 404 ? 'Not found' : status < 500 ? 'Cannot show this page' : 'Something went wrong';
      return sendPage(reply, assets, { title: heading, body: renderMessage(heading, message) }, status);
    });

    pages.get('/', hidden, async (request, reply) => {
      const query = queryOf(request);
      const form: SearchForm = {
        q: firstText(query.q),
        capability: firstText(query.capability),
        tags: firstText(query.tags),
        min_reputation: firstText(query.min_reputation),
        available: firstText(query.available),
        scope: firstText(query.scope),
        domain: firstText(query.domain),
        sort: firstText(query.sort),
        order: firstText(query.order),
        offset: offsetOf(firstText(query.offset), SEARCH_RULES.offsetMax),
      };
      const { stats } = await ctx.stats.get();
      const view: HomeView = { form, stats };
      let status = 200;
      try {
        // The MCP search tool's validator: a bad field reads as it does there.
        view.result = await ctx.search.search(parseSearchArguments(searchArgumentsOf(form)));
        const dids = view.result.agents.map((agent) => agent.did);
        view.labels = await ctx.agentLabels.labels(dids);
        // Each hit carries its availability (no second read); cards speak of agents ever observed.
        const observed = view.result.agents.filter(
          ({ availability }) => availability.status !== 'unknown' || availability.last_seen_at !== null,
        );
        view.availability = {
          byDid: new Map(observed.map((agent) => [agent.did, agent.availability])),
          now: ctx.clock.now(),
        };
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
        view.error = error.details;
        status = 400;
      }
      const searching = form.q !== '' ? `Agents matching “${form.q}”` : 'Find an agent';
      return sendPage(
        reply,
        assets,
        {
          title: searching,
          description: 'Search the agents of this registry by what they do, their tags and their reputation.',
          current: 'search',
          body: renderHome(view),
        },
        status,
      );
    });

    const agentPage = async (request: FastifyRequest, reply: FastifyReply, ref: AgentRef) => {
      let profile;
      try {
        profile = await ctx.agents.getProfile(
          ref.handle === undefined ? ref.did : await ctx.domains.resolveHandle(ref.handle),
        );
      } catch (error) {
        if (error instanceof ApiError && (error.status === 404 || error.status === 400)) {
          return notFoundPage(
            reply,
            ref.handle === undefined
              ? `No agent of this registry has the DID ${ref.did}.`
              : `No agent of this registry has the handle ${ref.handle}.`,
          );
        }
        throw error;
      }
      const offset = offsetOf(firstText(queryOf(request).reviews_offset), 100_000);
      const [reputation, reviews, didDocument] = await Promise.all([
        ctx.reputation.get(profile.did),
        ctx.reviews.listForAgent(profile.did, { limit: REVIEWS_PAGE_SIZE, offset }),
        profile.status === 'active'
          ? ctx.didResolution.resolve(profile.did).catch((error: unknown): DidDocument | undefined => {
              if (error instanceof NotFoundError) return undefined;
              throw error;
            })
          : Promise.resolve(undefined),
      ]);
      const [reviewers, log] = await Promise.all([
        ctx.agentLabels.labels(reviews.reviews.map((review) => review.reviewer_did)),
        ctx.transparencyLog.standing(profile.did, profile),
      ]);
      return sendPage(reply, assets, {
        title: profile.name,
        description: profile.description ?? `Agent ${profile.did}`,
        body: renderAgent({
          profile,
          reputation,
          reviews,
          reviewers,
          didDocument,
          publicUrl,
          now: ctx.clock.now(),
          log,
        }),
      });
    };
    pages.get('/agents/:did', hidden, async (request, reply) =>
      agentPage(request, reply, { did: (request.params as { did: string }).did }),
    );
    // The readable URL of an agent with a handle: /agents/com.example/translator.
    pages.get('/agents/:namespace/:name', hidden, async (request, reply) => {
      const { namespace, name } = request.params as { namespace: string; name: string };
      return agentPage(request, reply, { handle: `${namespace}/${name}` });
    });

    pages.get('/stats', hidden, async (_request, reply) => {
      const [{ stats }, activity] = await Promise.all([ctx.stats.get(), ctx.activity.get()]);
      return sendPage(reply, assets, {
        title: 'Statistics',
        description: 'Agents, reviews, searches and invocations of this registry, and its rules.',
        current: 'stats',
        body: renderStats(stats, activity),
      });
    });

    pages.get('/join', hidden, async (_request, reply) =>
      sendPage(reply, assets, {
        title: 'Register an agent',
        description: 'Register an agent with the command line, the SDK or raw HTTP.',
        current: 'join',
        body: renderJoin({ publicUrl, signingHref }),
      }),
    );

    if (signing !== undefined) {
      const body = renderMarkdown(signing);
      pages.get(SIGNING_ROUTE, hidden, async (_request, reply) =>
        sendPage(reply, assets, { title: 'Signing', current: 'join', body }),
      );
    }
  });
}
