import type { ChangeFeedService } from './change-feed.js';
import { ChangeFeedQuery, ChangePage } from './change-feed-schemas.js';
import { errors } from '../../http/common-schemas.js';
import { refuseUnknownQuery } from '../../http/query.js';
import type { App } from '../../http/types.js';

/** What the change-feed route uses of the context. */
export interface ChangeFeedRouteDeps {
  changeFeed: ChangeFeedService;
}

export function changeFeedRoutes(app: App, ctx: ChangeFeedRouteDeps): void {
  app.get(
    '/api/agents/changes',
    {
      preValidation: refuseUnknownQuery(ChangeFeedQuery),
      schema: {
        tags: ['Discovery'],
        operationId: 'listAgentChanges',
        summary: 'Agents created, updated or deactivated after a cursor, in commit order (for mirrors)',
        description:
          'Extension: the change feed. Replaying it from the start (no since) and applying each change ' +
          "(profile = upsert, tombstone = delete) ends with exactly the registry's active agents; poll with " +
          'next_cursor to keep up. Order is commit order on every node. See docs/mirroring.md.',
        security: [],
        'x-status-reasons': {
          400: '`since` is not a cursor this feed returned, or is ahead of this feed (a cursor of another registry, or kept from before a restore from backup: replay from the beginning) (`INVALID_CURSOR`); `limit` is out of range, or a parameter is unknown.',
        },
        querystring: ChangeFeedQuery,
        response: { 200: ChangePage, ...errors(400, 500) },
      },
    },
    async (request) => ctx.changeFeed.changes(request.query),
  );
}
