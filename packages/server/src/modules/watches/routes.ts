import { Type } from '@sinclair/typebox';
import { bearerAuth, errors } from '../../http/common-schemas.js';
import type { App } from '../../http/types.js';
import { authenticated, callerOf, type AuthenticatedRouteDeps } from '../agents/authenticate.js';
import { CreateWatchRequest, CreatedWatch, WatchIdParams, WatchesPage, WatchesQuery } from './schemas.js';
import type { WatchService } from './watches.js';

const tags = ['Watches'];

export interface WatchRouteDeps extends AuthenticatedRouteDeps {
  watches: WatchService;
}

export function watchRoutes(app: App, ctx: WatchRouteDeps): void {
  app.post(
    '/api/watches',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'createWatch',
        summary: "Extension: be told (signed webhooks) of an agent's or a remote entry's changes",
        description:
          'Subscribes the caller: each event of `events` on `target` is POSTed to `url` as a Standard Webhooks ' +
          'message signed with the returned `secret` (docs/watches.md).',
        security: bearerAuth,
        body: CreateWatchRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          201: 'The watch, with its signing secret (shown only now).',
          400: 'The url is not an https:// URL the registry may deliver to (`INVALID_URL`), or an event does not apply to the target (`INVALID_WATCH_EVENTS`).',
          404: 'No agent or remote entry is `target` (`WATCH_TARGET_NOT_FOUND`).',
          409: 'The caller, or the target, has the most watches allowed (`WATCH_LIMIT_REACHED`).',
          429: 'More watches created than WATCH_RATE_LIMIT in the window (`WATCH_RATE_LIMITED`).',
        },
        response: { 201: CreatedWatch, ...errors(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await ctx.watches.create(callerOf(request), request.body)),
  );

  app.get(
    '/api/watches',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'listWatches',
        summary: "Extension: the caller's watches, oldest first",
        security: bearerAuth,
        querystring: WatchesQuery,
        response: { 200: WatchesPage, ...errors(400, 401) },
      },
    },
    async (request) => ctx.watches.list(callerOf(request), request.query),
  );

  app.delete(
    '/api/watches/:id',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'deleteWatch',
        summary: 'Extension: delete one of your watches (its pending deliveries are dropped)',
        security: bearerAuth,
        params: WatchIdParams,
        'x-status-reasons': { 204: 'Deleted.', 404: 'You have no watch with this id (`WATCH_NOT_FOUND`).' },
        response: { 204: Type.Null({ description: 'Deleted: no body' }), ...errors(401, 404) },
      },
    },
    async (request, reply) => {
      await ctx.watches.remove(callerOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
