import { Type } from '@sinclair/typebox';
import type { Config } from '../../kernel/config.js';
import type { RegistryMetrics } from '../../telemetry/prometheus.js';
import type { RunningBuild } from '../../kernel/version.js';
import { operatorTokenCheck } from '../../http/operator-token.js';
import { errors, ref } from '../../http/common-schemas.js';
import { BuildInfo } from './schemas.js';
import type { App } from '../../http/types.js';

const tags = ['Operations'];

/** What the operations routes use of the context. */
const RegistryAudience = Type.Object(
  {
    audience: Type.String({
      description: "This registry's PUBLIC_URL origin: the `audience` every signed message must name",
    }),
    version: Type.String(),
  },
  { $id: 'RegistryAudience' },
);

export interface OperationsRouteDeps {
  build: RunningBuild;
  config: {
    operations: Pick<Config['operations'], 'metricsToken'>;
    identity: Pick<Config['identity'], 'publicUrl'>;
  };
  metrics: RegistryMetrics;
}

export function operationsRoutes(app: App, ctx: OperationsRouteDeps): void {
  const token = ctx.config.operations.metricsToken;
  const requireMetricsToken = operatorTokenCheck(token, 'GET /metrics');

  app.get(
    '/metrics',
    {
      onRequest: requireMetricsToken,
      logLevel: 'warn',
      schema: {
        tags,
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description:
          'Request, invocation, webhook, registration, review, database and process metrics in the Prometheus ' +
          'text format. Public unless the registry sets METRICS_TOKEN; then send it as a bearer token (401 otherwise).',
        security: token === undefined ? [] : [{ metricsToken: [] }],
        'x-no-database': true,
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain': { schema: Type.String() } },
          },
          ...errors(...(token === undefined ? [] : [401])),
        },
      },
    },
    async (_request, reply) => {
      void reply.header('content-type', ctx.metrics.registry.contentType);
      return ctx.metrics.render();
    },
  );

  app.get(
    '/.well-known/agent-registry.json',
    {
      logLevel: 'warn',
      schema: {
        tags,
        operationId: 'getRegistryAudience',
        summary: "The registry's own URL, which signed messages name as their audience",
        description:
          'Extension (docs/signing.md, section "Audience"). The registry\'s PUBLIC_URL as its origin: what ' +
          'registration, login and key messages must carry as `audience`, whatever address the client reached ' +
          'it by (127.0.0.1 for localhost, an internal name behind a proxy). The SDK and CLI read it once and ' +
          'sign for it. Cacheable for an hour.',
        security: [],
        'x-no-database': true,
        response: { 200: RegistryAudience },
      },
    },
    async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=3600');
      return { audience: ctx.config.identity.publicUrl, version: ctx.build.version };
    },
  );

  app.get(
    '/version',
    {
      logLevel: 'warn',
      schema: {
        tags,
        operationId: 'getVersion',
        summary: 'Which build of the registry answers',
        description: 'Version, git commit and build time of the running registry, and its Node.js version.',
        security: [],
        'x-no-database': true,
        response: { 200: ref(BuildInfo) },
      },
    },
    async () => ctx.build,
  );
}
