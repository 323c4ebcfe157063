import type { FederationService } from './federation.js';
import { errors, ref } from '../../http/common-schemas.js';
import { refuseUnknownQuery } from '../../http/query.js';
import { operatorTokenCheck } from '../../http/operator-token.js';
import type { App } from '../../http/types.js';
import {
  FederationStatus,
  RemoteEntriesPage,
  RemoteEntriesQuery,
  RemoteEntry,
  RemoteEntryParams,
} from './schemas.js';

const tags = ['Federation'];

/** What the federation routes use of the context. */
export interface FederationRouteDeps {
  federation: FederationService;
  config: { metricsToken?: string };
}

export function federationRoutes(app: App, ctx: FederationRouteDeps): void {
  app.get(
    '/api/federation/entries',
    {
      preValidation: refuseUnknownQuery(RemoteEntriesQuery),
      schema: {
        tags,
        operationId: 'listRemoteEntries',
        summary: 'Read-only entries of agents that live elsewhere, by id',
        description:
          'Extension (docs/federation.md): the entries mirrored from peer registries and imported from A2A ' +
          'agent cards and MCP Registries, filterable by source, kind and verification state.',
        security: [],
        querystring: RemoteEntriesQuery,
        response: { 200: RemoteEntriesPage, ...errors(400, 500) },
      },
    },
    async (request) => ctx.federation.entries(request.query),
  );

  app.get(
    '/api/federation/entries/:id',
    {
      schema: {
        tags,
        operationId: 'getRemoteEntry',
        summary: 'One remote entry, with its provenance',
        description:
          'Extension: a remote entry as this registry holds it. The agent is invoked at its home (endpoints), never through this registry.',
        security: [],
        'x-status-reasons': { 404: 'No active remote entry has this id (`REMOTE_ENTRY_NOT_FOUND`).' },
        params: RemoteEntryParams,
        response: { 200: ref(RemoteEntry), ...errors(400, 404, 500) },
      },
    },
    async (request) => ctx.federation.entry(request.params.id),
  );

  const token = ctx.config.metricsToken;
  app.get(
    '/api/federation/status',
    {
      onRequest: operatorTokenCheck(token, 'GET /api/federation/status'),
      schema: {
        tags,
        operationId: 'getFederationStatus',
        summary: "Each peer's and import's state and last error (for operators)",
        description:
          'Extension: public unless the registry sets METRICS_TOKEN; then send it as a bearer token (401 otherwise).',
        security: token === undefined ? [] : [{ metricsToken: [] }],
        response: { 200: FederationStatus, ...errors(...(token === undefined ? [500] : [401, 500])) },
      },
    },
    async () => ctx.federation.status(),
  );
}
