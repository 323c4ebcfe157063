import type { AppContext } from '../../context.js';
import { errors } from '../schemas/common.js';
import { SearchQuery, SearchResponse } from '../schemas/search.js';
import { refuseUnknownQuery } from '../query.js';
import type { App } from '../types.js';

export function searchRoutes(app: App, ctx: AppContext): void {
  app.get(
    '/api/agents/search',
    {
      preValidation: refuseUnknownQuery(SearchQuery),
      schema: {
        tags: ['Discovery'],
        summary: 'Search active agents by capability, tags, reputation and full text',
        querystring: SearchQuery,
        response: { 200: SearchResponse, ...errors(400, 500) },
      },
    },
    async (request) => ctx.search.search(request.query),
  );
}
