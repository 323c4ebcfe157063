import type { Config } from '../../kernel/config.js';
import type { FederationService } from './federation.js';
import { errors, ref } from '../../http/common-schemas.js';
import { refuseUnknownQuery } from '../../http/query.js';
import { operatorOrPublic, operatorWriteCheck } from '../../http/operator-token.js';
import type { App } from '../../http/types.js';
import {
  FederationStatus,
  RemoteEntriesPage,
  RemoteEntriesQuery,
  RemoteEntry,
  RemoteEntryParams,
  ResumePeerRequest,
  SourceStatus,
} from './schemas.js';

const tags = ['Federation'];

/** What the federation routes use of the context. */
export interface FederationRouteDeps {
  federation: FederationService;
  config: {
    operations: Pick<Config['operations'], 'metricsToken'>;
    federation: Pick<Config['federation'], 'adminToken'>;
  };
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

  const reader = operatorOrPublic(
    [ctx.config.operations.metricsToken, ctx.config.federation.adminToken],
    'GET /api/federation/status',
  );
  const operatorTokens: Record<string, string[]>[] = [
    ...(ctx.config.operations.metricsToken === undefined ? [] : [{ metricsToken: [] }]),
    ...(ctx.config.federation.adminToken === undefined ? [] : [{ federationAdminToken: [] }]),
  ];
  app.get(
    '/api/federation/status',
    {
      schema: {
        tags,
        operationId: 'getFederationStatus',
        summary: "Each peer's and import's state; its last error for operators",
        description:
          "Extension (docs/federation.md, \"Operator status\"): a public summary (each source's state, entries and times, `view: public`) to anyone; with METRICS_TOKEN or FEDERATION_ADMIN_TOKEN as a bearer token, the operator's view (`view: operator`), which adds each source's `last_error` and `resumed`. Error texts quote what remote hosts answered, so they are never public: a registry with neither token set shows them only in its log.",
        security: [{}, ...operatorTokens],
        ...(operatorTokens.length === 0
          ? {}
          : {
              'x-status-reasons': {
                401: 'A bearer token was sent that is neither METRICS_TOKEN nor FEDERATION_ADMIN_TOKEN (`INVALID_METRICS_TOKEN`).',
              },
            }),
        response: {
          200: FederationStatus,
          ...errors(...(operatorTokens.length === 0 ? [500] : [401, 500])),
        },
      },
    },
    async (request) => ctx.federation.status(reader(request)),
  );

  app.post(
    '/api/federation/peers/resume',
    {
      onRequest: operatorWriteCheck(ctx.config.federation.adminToken, 'POST /api/federation/peers/resume'),
      schema: {
        tags,
        operationId: 'resumePeer',
        summary: 'Resume following a stopped peer, re-trusting its current log (for operators)',
        description:
          'Extension (docs/federation.md, "Resuming a stopped peer"): forgets the peer\'s verified tree (and its key, unless pinned), removes its entries and follows it again from the start of its current log. Needs FEDERATION_ADMIN_TOKEN as a bearer token (never METRICS_TOKEN). `by` is recorded on the status.',
        security: [{ federationAdminToken: [] }],
        body: ResumePeerRequest,
        'x-status-reasons': {
          401: 'No FEDERATION_ADMIN_TOKEN is set, or the bearer token is not it (`INVALID_ADMIN_TOKEN`).',
          404: 'The peer is not in FEDERATION_PEERS (`PEER_NOT_FOUND`).',
          409: 'The peer is not stopped (`PEER_NOT_STOPPED`).',
        },
        response: { 200: SourceStatus, ...errors(400, 401, 404, 409, 500) },
      },
    },
    async (request) => ctx.federation.resumePeer(request.body.peer, request.body.by),
  );
}
