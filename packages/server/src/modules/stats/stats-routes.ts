import type { StatsService } from './stats.js';
import { errors } from '../../http/common-schemas.js';
import { ExtendedStats } from './stats-schemas.js';
import type { App } from '../../http/types.js';

/** What the statistics route uses of the context. */
export interface StatsRouteDeps {
  stats: StatsService;
}

export function statsRoutes(app: App, ctx: StatsRouteDeps): void {
  app.get(
    '/api/stats',
    {
      schema: {
        tags: ['Discovery'],
        operationId: 'getStats',
        summary: 'Platform statistics and governance rules (cached 60 seconds)',
        description: 'Counts of agents, reviews and searches, and the rules this registry enforces.',
        security: [],
        response: { 200: ExtendedStats, ...errors(500) },
      },
    },
    async (_request, reply) => {
      const { stats, maxAgeSeconds } = await ctx.stats.get();
      void reply.header('cache-control', `public, max-age=${maxAgeSeconds}`);
      return stats;
    },
  );
}
