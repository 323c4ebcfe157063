import type { SearchService } from './search.js';
import { errors } from '../../http/common-schemas.js';
import { SearchQuery, SearchResponse } from './search-schemas.js';
import { refuseUnknownQuery } from '../../http/query.js';
import { searchResponseJson } from './search-json.js';
import type { App } from '../../http/types.js';

/** What the search route uses of the context. */
export interface SearchRouteDeps {
  search: SearchService;
}

export function searchRoutes(app: App, ctx: SearchRouteDeps): void {
  app.get(
    '/api/agents/search',
    {
      preValidation: refuseUnknownQuery(SearchQuery),
      schema: {
        tags: ['Discovery'],
        operationId: 'searchAgents',
        summary: 'Search active agents by capability, tags, reputation and full text',
        description:
          'Active agents matching every filter given: full text (q), capability type, any of the tags, and a ' +
          'least reputation; ranked by relevance with q, else by reputation or created_at.',
        security: [],
        'x-status-reasons': {
          400: 'A parameter is invalid, or unknown (`UNKNOWN_QUERY_PARAMETER`; the details list the accepted ones: q, capability, tags, min_reputation, min_success_rate, active_within_days, available, domain, scope, limit, offset, cursor, sort, order), or a cursor is malformed, from another search, or sent with offset (`INVALID_CURSOR`), or available=true, sort=availability or domain is combined with min_success_rate, active_within_days or a service-record sort, or domain with available=true or sort=availability (`VALIDATION_FAILED`).',
        },
        querystring: SearchQuery,
        response: { 200: SearchResponse, ...errors(400, 500) },
      },
    },
    // The body is written from the stored rows (search-json.ts); Fastify sends a string with a JSON
    // content type as it is (the type provider only knows the object form, hence the cast).
    async (request, reply) => {
      const page = await ctx.search.searchPage(request.query);
      return reply.type('application/json; charset=utf-8').send(searchResponseJson(page) as never);
    },
  );
}
