import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { DatabaseUnavailableError } from '../../errors.js';
import { errors } from '../schemas/common.js';
import type { App } from '../types.js';

const Status = Type.Object({ status: Type.String() });

export function healthRoutes(app: App, ctx: AppContext): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Liveness: the process serves HTTP',
        response: { 200: Status },
      },
      logLevel: 'warn',
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: the database answers',
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
