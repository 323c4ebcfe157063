import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type Options as AjvOptions } from 'ajv';
import Fastify from 'fastify';
import type { AppContext } from './context.js';
import { handleError, handleNotFound } from './http/error-handler.js';
import { agentRoutes } from './http/routes/agents.js';
import { authRoutes } from './http/routes/auth.js';
import { discoveryRoutes } from './http/routes/discovery.js';
import { healthRoutes } from './http/routes/health.js';
import { invocationRoutes } from './http/routes/invocation.js';
import { reviewRoutes } from './http/routes/reviews.js';
import { searchRoutes } from './http/routes/search.js';
import { statsRoutes } from './http/routes/stats.js';
import { Capability } from './http/schemas/agents.js';
import { ServiceRecord } from './http/schemas/service-record.js';
import { ErrorResponse } from './http/schemas/common.js';
import { Chain, DidDocument } from './http/schemas/discovery.js';
import type { App } from './http/types.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from './http/json-depth.js';
import { BadRequestError } from './errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const ajvOptions: AjvOptions = {
  strict: false,
  useDefaults: true,
  removeAdditional: false,
  allErrors: false,
};

export interface BuildAppOptions {
  logger?: boolean;
}

export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<App> {
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : { level: ctx.config.logLevel, redact: ['req.headers.authorization'] },
    bodyLimit: ctx.config.bodyLimitBytes,
    trustProxy: ctx.config.trustProxy,
    routerOptions: { maxParamLength: 512 },
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: ajvOptions },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are JSON and must carry the right types; only query strings and paths are coerced from text.
  // One pair per app, so several apps (two registry nodes in one test) can be built in one process.
  const bodyAjv = new Ajv({ ...ajvOptions, coerceTypes: false });
  const textAjv = new Ajv({ ...ajvOptions, coerceTypes: 'array' });

  for (const schema of [ErrorResponse, Capability, Chain, DidDocument, ServiceRecord]) {
    bodyAjv.addSchema(schema);
    textAjv.addSchema(schema);
    app.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema),
  );
  app.decorateRequest('caller', null);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

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

  // A callback hook, not an async one: it runs on every response, and a promise per response shows.
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    done(null, payload);
  });

  // Bearer tokens, never cookies, so any origin may call the API from a browser.
  await app.register(cors, { origin: '*', exposedHeaders: ['x-request-id', 'retry-after'] });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Registry',
        version: '0.1.0',
        description:
          'Agents prove control of a key, get a DID and a token, publish capabilities, find, invoke and review each other. ' +
          'Every error is JSON {error, details, code}.',
      },
      servers: [{ url: ctx.config.publicUrl }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  healthRoutes(app, ctx);
  authRoutes(app, ctx);
  agentRoutes(app, ctx);
  discoveryRoutes(app, ctx);
  invocationRoutes(app, ctx);
  // Blocked invocations and long polls answer at once instead of holding shutdown for minutes.
  app.addHook('preClose', async () => ctx.stopWaiters());
  searchRoutes(app, ctx);
  reviewRoutes(app, ctx);
  statsRoutes(app, ctx);
  return app;
}
