import { Type } from '@sinclair/typebox';
import type { DatabaseHandle } from '../../db/connect.js';
import type { RunningBuild } from '../../kernel/version.js';
import { errors, ref } from '../../http/common-schemas.js';
import { Health } from './schemas.js';
import { DatabaseUnavailableError } from '../../kernel/errors.js';
import type { App } from '../../http/types.js';

const Status = Type.Object({ status: Type.String() });

/** What the health routes use of the context. */
export interface HealthRouteDeps {
  build: RunningBuild;
  database: Pick<DatabaseHandle, 'ping'>;
}

export function healthRoutes(app: App, ctx: HealthRouteDeps): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getHealth',
        summary: 'Liveness: the process serves HTTP',
        description: 'Answers 200 while the process serves HTTP, with the version of the running build.',
        security: [],
        'x-no-database': true,
        response: { 200: ref(Health) },
      },
      logLevel: 'warn',
    },
    async () => ({ status: 'ok', version: ctx.build.version, commit: ctx.build.commit }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getReadiness',
        summary: 'Readiness: the database answers',
        description:
          'Answers 200 when the database answers a query; a load balancer sends traffic only then.',
        security: [],
        'x-status-reasons': {
          503: 'The database does not answer (`DATABASE_UNAVAILABLE`), or the node is shutting down.',
        },
        response: { 200: Status, ...errors(503) },
      },
      logLevel: 'warn',
    },
    async () => {
      try {
        await ctx.database.ping();
      } catch (error) {
        throw new DatabaseUnavailableError(error, 'The database does not answer');
      }
      return { status: 'ready' };
    },
  );
}
