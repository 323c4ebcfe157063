import { errors } from '../../http/common-schemas.js';
import { refuseUnknownQuery } from '../../http/query.js';
import type { App } from '../../http/types.js';
import { ObservationsPage, ObservationsQuery } from './observation-schemas.js';
import type { ObservationService } from './observations.js';
import { RemoteEntryParams } from './schemas.js';

export function observationRoutes(app: App, ctx: { observations: ObservationService }): void {
  app.get(
    '/api/federation/entries/:id/observations',
    {
      preValidation: refuseUnknownQuery(ObservationsQuery),
      schema: {
        tags: ['Federation'],
        operationId: 'listRemoteEntryObservations',
        summary: "Each change of an imported entry's observed status or tools digest, newest first",
        description:
          'Extension (docs/federation.md, "Observed"): every change the probes found of the entry\'s status class or tools_digest (the first observation too), each with the `entry.observed` leaf of the transparency log that records it. Paged by cursor.',
        security: [],
        'x-status-reasons': { 404: 'No active remote entry has this id (`REMOTE_ENTRY_NOT_FOUND`).' },
        params: RemoteEntryParams,
        querystring: ObservationsQuery,
        response: { 200: ObservationsPage, ...errors(400, 404, 500) },
      },
    },
    async (request) => ctx.observations.history(request.params.id, request.query),
  );
}
