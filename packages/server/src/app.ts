import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type Options as AjvOptions } from 'ajv';
import Fastify, { LogController, type FastifyServerFactory } from 'fastify';
import type { AppContext } from './context.js';
import { webRoutes } from './faces/web/routes.js';
import { clientErrorHandler } from './faces/rest/client-errors.js';
import { MAX_PARAM_LENGTH } from './faces/errors.js';
import { handleError } from './faces/rest/error-handler.js';
import { badlyEncodedParameter, parseQueryString } from './faces/rest/query-string.js';
import { agentRoutes } from './modules/agents/routes.js';
import { keyRoutes } from './modules/key-rotation/routes.js';
import { domainRoutes } from './modules/domains/routes.js';
import { authRoutes } from './modules/agents/auth-routes.js';
import { didRoutes } from './modules/agents/did-routes.js';
import { healthRoutes } from './modules/operations/health-routes.js';
import { invocationRoutes } from './modules/tasks/routes.js';
import { a2aRoutes } from './faces/a2a/routes.js';
import { ardRoutes } from './faces/ard/routes.js';
import { handleArdError, isArdRequest } from './faces/ard/errors.js';
import { mcpRoutes } from './faces/mcp/routes.js';
import { reviewRoutes } from './modules/reviews/routes.js';
import { searchRoutes } from './modules/search/search-routes.js';
import { changeFeedRoutes } from './modules/agents/change-feed-routes.js';
import { statsRoutes } from './modules/stats/stats-routes.js';
import { transparencyLogRoutes } from './modules/transparency-log/routes.js';
import { federationRoutes } from './modules/federation/routes.js';
import { observationRoutes } from './modules/federation/observation-routes.js';
import { watchRoutes } from './modules/watches/routes.js';
import { moderationRoutes } from './modules/moderation/routes.js';
import { swaggerUiBranding } from './faces/rest/branding.js';
import { openapiOptions } from './faces/rest/openapi/document.js';
import { operationsRoutes } from './modules/operations/operations-routes.js';
import { COMPONENT_SCHEMAS } from './faces/rest/openapi/components.js';
import { forValidation } from './http/validation.js';
import { observeRequests } from './faces/rest/observe.js';
import { CONNECTIONS_CHECK_MS, boundConnectionsPerAddress } from './faces/rest/sockets.js';
import type { App } from './http/types.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from './faces/rest/json-depth.js';
import { BadRequestError } from './kernel/errors.js';
import { assertValidText } from './kernel/text-rules.js';

/** Body members that are payloads passed between agents, not text the registry stores or searches. */
const OPAQUE_BODY_MEMBERS = ['input', 'output'];

/** Swagger UI's bundle sets inline styles; everything else, scripts included, is this origin's. */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const ajvOptions: AjvOptions = {
  strict: false,
  useDefaults: true,
  removeAdditional: false,
  allErrors: false,
};

export interface BuildAppOptions {
  logger?: boolean;
  /** Where request log lines go (tests read them); stdout by default. */
  logStream?: { write(line: string): void };
  /** The HTTP server to serve on (one already listening, main.ts); Fastify makes its own without it. */
  serverFactory?: FastifyServerFactory;
}

export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<App> {
  // The handler logs through the app, which exists by the time a connection can fail.
  const onClientError = (error: Error, socket: Socket): void => clientErrorHandler(app.log)(error, socket);
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: ctx.config.operations.logLevel,
            redact: ['req.headers.authorization'],
            ...(options.logStream === undefined ? {} : { stream: options.logStream }),
          },
    // One line per request, written by observeRequests when the response is sent (not Fastify's two).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.network.bodyLimitBytes,
    // Receiving a request (headers and body) has a deadline; a long poll or a blocked invocation, whose
    // request has arrived, waits for its answer without one. Checked every second, not Node's 30 s.
    requestTimeout: ctx.config.network.requestTimeoutMs,
    http: {
      headersTimeout: ctx.config.network.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
    trustProxy: ctx.config.network.trustProxy,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, querystringParser: parseQueryString },
    // Errors raised before routing (bad URL encoding, an over-long DID) and by Node's HTTP parser
    // (bad Content-Length or chunked encoding, oversized headers) answer {error, details, code} too.
    frameworkErrors: (error, request, reply) =>
      isArdRequest(request.url) ? handleArdError(error, request, reply) : handleError(error, request, reply),
    clientErrorHandler: (error, socket) => onClientError(error, socket),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: ajvOptions },
    ...(options.serverFactory === undefined ? {} : { serverFactory: options.serverFactory }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Behind a trusted proxy every peer is the proxy: it bounds connections per client (docs/operations.md).
  if (ctx.config.network.maxConnectionsPerAddress > 0 && !ctx.config.network.trustProxy)
    boundConnectionsPerAddress(app.server, ctx.config.network.maxConnectionsPerAddress);

  // Bodies are JSON and must carry the right types; only query strings and paths are coerced from text.
  // One pair per app, so several apps (two registry nodes in one test) can be built in one process.
  const bodyAjv = new Ajv({ ...ajvOptions, coerceTypes: false });
  const textAjv = new Ajv({ ...ajvOptions, coerceTypes: 'array' });

  for (const schema of COMPONENT_SCHEMAS) {
    bodyAjv.addSchema(forValidation(schema));
    textAjv.addSchema(forValidation(schema));
    app.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(forValidation(schema)),
  );
  app.decorateRequest('caller', null);
  app.setErrorHandler(handleError);

  // An empty body with a JSON content type (common on DELETE) is "no body", not malformed JSON.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // JSON only: a text/plain body is a 415, not a string that fails validation.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      done(
        new BadRequestError(
          'JSON_TOO_DEEP',
          `JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
        ),
        undefined,
      );
      return;
    }
    parseJson(request, text, done);
  });

  // One rule for text on every route and both databases: well-formed Unicode, no U+0000 outside the
  // opaque invocation payloads (`input`, `output`), before any route validates or stores it.
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      const badParameter = badlyEncodedParameter(request.query);
      if (badParameter !== undefined) {
        throw new BadRequestError(
          'INVALID_URL_ENCODING',
          `query ${badParameter.slice(0, 64)} is not valid percent-encoded UTF-8; encode each byte of UTF-8 as %XX`,
        );
      }
      assertValidText(request.params, 'path');
      assertValidText(request.query, 'query');
      assertValidText(request.body, '', OPAQUE_BODY_MEMBERS);
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  // X-Request-Id on every response, one log line and the metrics of every request.
  observeRequests(app, ctx);

  // Bearer tokens, never cookies, so any origin may call the API from a browser.
  await app.register(cors, { origin: '*', exposedHeaders: ['x-request-id', 'retry-after'] });

  await app.register(
    swagger,
    openapiOptions({
      version: ctx.build.version,
      metricsToken: ctx.config.operations.metricsToken !== undefined,
    }),
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    // Swagger UI's page and scripts come from this origin only and it is never framed (clickjacking).
    staticCSP: DOCS_CSP,
    ...swaggerUiBranding,
  });
  app.get('/openapi.json', { schema: { hide: true }, logLevel: 'warn' }, async () => app.swagger());

  healthRoutes(app, ctx);
  operationsRoutes(app, ctx);
  authRoutes(app, ctx);
  agentRoutes(app, ctx);
  keyRoutes(app, ctx);
  domainRoutes(app, ctx);
  didRoutes(app, ctx);
  invocationRoutes(app, ctx);
  // Blocked invocations and long polls answer at once instead of holding shutdown for minutes.
  app.addHook('preClose', async () => ctx.stopWaiters());
  searchRoutes(app, ctx);
  changeFeedRoutes(app, ctx);
  reviewRoutes(app, ctx);
  statsRoutes(app, ctx);
  transparencyLogRoutes(app, ctx);
  federationRoutes(app, ctx);
  observationRoutes(app, ctx);
  watchRoutes(app, ctx);
  moderationRoutes(app, ctx);
  // Also the not-found handler: an HTML page for browsers, the JSON error for everything else.
  webRoutes(app, ctx);
  mcpRoutes(app, ctx);
  a2aRoutes(app, ctx);
  await ardRoutes(app, ctx);
  return app;
}
