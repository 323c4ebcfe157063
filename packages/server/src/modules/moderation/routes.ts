import { DidParams, bearerAuth, errors } from '../../http/common-schemas.js';
import { operatorWriteCheck } from '../../http/operator-token.js';
import type { App } from '../../http/types.js';
import type { Config } from '../../kernel/config.js';
import { authenticated, callerOf, type AuthenticatedRouteDeps } from '../agents/authenticate.js';
import type { ModerationService } from './moderation.js';
import { RemoteEntryParams } from '../federation/schemas.js';
import type { ReportService } from './reports.js';
import type { AppealService } from './appeals.js';
import {
  Appeal,
  AppealRequest,
  AppealsPage,
  AppealsQuery,
  Decision,
  DecisionsPage,
  DecisionsQuery,
  ReportReceipt,
  ReportRequest,
  ReportsPage,
  ReportsQuery,
  RestoreRequest,
  SuspendRequest,
} from './schemas.js';

const tags = ['Moderation'];
const operatorSecurity = [{ federationAdminToken: [] }];
const OPERATOR_401 =
  'No FEDERATION_ADMIN_TOKEN is set, or the bearer token is not it (`INVALID_ADMIN_TOKEN`).';

export interface ModerationRouteDeps extends AuthenticatedRouteDeps {
  config: AuthenticatedRouteDeps['config'] & { federation: Pick<Config['federation'], 'adminToken'> };
  reports: ReportService;
  moderation: ModerationService;
  appeals: AppealService;
}

export function moderationRoutes(app: App, ctx: ModerationRouteDeps): void {
  const operator = (what: string) => operatorWriteCheck(ctx.config.federation.adminToken, what);

  app.post(
    '/api/reports',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'reportAbuse',
        summary: 'Extension: report an agent or a remote entry to the operator',
        description:
          'Reports an agent (DID) or a remote entry (id) as malware, impersonation, spam, broken or other (docs/moderation.md). ' +
          'Naming task_id, a task in which you invoked the target, makes the report verified. One report per reporter and target.',
        security: bearerAuth,
        body: ReportRequest,
        'x-rate-limited': true,
        'x-status-reasons': {
          201: 'The report, as stored (its id and state).',
          400: 'task_id is not a task in which you invoked the target (`REPORT_TASK_NOT_FOUND`), or a field is out of bounds.',
          403: 'An agent cannot report itself (`SELF_REPORT`), or the caller is suspended (`AGENT_SUSPENDED`).',
          404: 'target is neither an agent here nor a remote entry listed here (`REPORT_TARGET_NOT_FOUND`).',
          409: 'You already reported this target (`REPORT_EXISTS`).',
          429: 'More reports than REPORT_RATE_LIMIT per reporter, or REPORT_RATE_LIMIT_PER_ADDRESS per address, in the window (`REPORT_RATE_LIMITED`).',
        },
        response: { 201: ReportReceipt, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await ctx.reports.submit(callerOf(request), request.body, { address: request.ip })),
  );

  app.get(
    '/api/admin/reports',
    {
      onRequest: operator('GET /api/admin/reports'),
      schema: {
        tags,
        operationId: 'listReports',
        summary: 'Extension: abuse reports, newest first (for operators)',
        description:
          'Reports with their reporter, details and evidence, filtered by target, reason and state (docs/moderation.md). Needs FEDERATION_ADMIN_TOKEN as a bearer token.',
        security: operatorSecurity,
        querystring: ReportsQuery,
        'x-status-reasons': { 401: OPERATOR_401 },
        response: { 200: ReportsPage, ...errors(400, 401) },
      },
    },
    async (request) => ctx.reports.list(request.query),
  );

  app.post(
    '/api/admin/agents/:did/suspend',
    {
      onRequest: operator('POST /api/admin/agents/{did}/suspend'),
      schema: {
        tags,
        operationId: 'suspendAgent',
        summary: 'Extension: suspend an agent (for operators)',
        description:
          'Takes the agent out of every search and listing, refuses its invocations and its token with `AGENT_SUSPENDED`, shows `moderation` on its profile and logs a `moderation.suspended` event (docs/moderation.md). Needs FEDERATION_ADMIN_TOKEN as a bearer token.',
        security: operatorSecurity,
        params: DidParams,
        body: SuspendRequest,
        'x-status-reasons': {
          401: OPERATOR_401,
          404: 'No agent has this DID here (`AGENT_NOT_FOUND`).',
          409: 'The agent is already suspended, or deactivated (`NOT_SUSPENDABLE`).',
        },
        response: { 200: Decision, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => ctx.moderation.suspendAgent(request.params.did, request.body),
  );

  app.post(
    '/api/admin/agents/:did/restore',
    {
      onRequest: operator('POST /api/admin/agents/{did}/restore'),
      schema: {
        tags,
        operationId: 'restoreAgent',
        summary: 'Extension: restore a suspended agent (for operators)',
        description:
          'Brings the agent back as it was before its suspension and logs a `moderation.restored` event (docs/moderation.md). Needs FEDERATION_ADMIN_TOKEN as a bearer token.',
        security: operatorSecurity,
        params: DidParams,
        body: RestoreRequest,
        'x-status-reasons': {
          401: OPERATOR_401,
          404: 'No agent has this DID here (`AGENT_NOT_FOUND`).',
          409: 'The agent is not suspended (`NOT_SUSPENDED`).',
        },
        response: { 200: Decision, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => ctx.moderation.restoreAgent(request.params.did, request.body),
  );

  app.post(
    '/api/admin/entries/:id/suspend',
    {
      onRequest: operator('POST /api/admin/entries/{id}/suspend'),
      schema: {
        tags,
        operationId: 'suspendRemoteEntry',
        summary: 'Extension: suspend a remote entry (for operators)',
        description:
          "Takes a mirrored or imported entry out of every federated search and listing, whatever its source sends next, and logs a `moderation.suspended` event (docs/moderation.md). The id is the entry's (GET /api/federation/entries), URL-encoded. Needs FEDERATION_ADMIN_TOKEN as a bearer token.",
        security: operatorSecurity,
        params: RemoteEntryParams,
        body: SuspendRequest,
        'x-status-reasons': {
          401: OPERATOR_401,
          404: 'No remote entry has this id (`REMOTE_ENTRY_NOT_FOUND`).',
          409: 'The entry is already suspended (`NOT_SUSPENDABLE`).',
        },
        response: { 200: Decision, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => ctx.moderation.suspendEntry(request.params.id, request.body),
  );

  app.post(
    '/api/admin/entries/:id/restore',
    {
      onRequest: operator('POST /api/admin/entries/{id}/restore'),
      schema: {
        tags,
        operationId: 'restoreRemoteEntry',
        summary: 'Extension: restore a suspended remote entry (for operators)',
        description:
          'Lists the entry again (or keeps it shadowed, if another source owns its DID now) and logs a `moderation.restored` event (docs/moderation.md). Needs FEDERATION_ADMIN_TOKEN as a bearer token.',
        security: operatorSecurity,
        params: RemoteEntryParams,
        body: RestoreRequest,
        'x-status-reasons': {
          401: OPERATOR_401,
          404: 'No remote entry has this id (`REMOTE_ENTRY_NOT_FOUND`).',
          409: 'The entry is not suspended (`NOT_SUSPENDED`).',
        },
        response: { 200: Decision, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => ctx.moderation.restoreEntry(request.params.id, request.body),
  );

  app.get(
    '/api/moderation',
    {
      schema: {
        tags,
        operationId: 'listModerationDecisions',
        summary: "Extension: the operator's decisions, newest first",
        description:
          'Every suspension and restoration, with its reason class, note and time, never the reporter; `seq` is its event leaf in the transparency log (docs/moderation.md).',
        security: [],
        querystring: DecisionsQuery,
        response: { 200: DecisionsPage, ...errors(400) },
      },
    },
    async (request) => ctx.moderation.decisions(request.query),
  );

  app.post(
    '/api/agents/:did/appeal',
    {
      schema: {
        tags,
        operationId: 'appealSuspension',
        summary: 'Extension: a suspended agent appeals its suspension, once (signed with its key)',
        description:
          'The agent\'s token is refused while it is suspended, so the appeal is signed with its key: the canonical JSON of {audience, decision, did, purpose: "moderation-appeal", statement, timestamp} (docs/signing.md, "Moderation appeals"). The operator reads it at GET /api/admin/appeals.',
        security: [],
        params: DidParams,
        body: AppealRequest,
        'x-status-reasons': {
          201: 'The appeal, as stored.',
          400: 'The signature does not verify (`INVALID_SIGNATURE`), the audience is another registry (`AUDIENCE_MISMATCH`) or the timestamp is stale (`TIMESTAMP_OUT_OF_RANGE`).',
          404: 'No agent has this DID here (`AGENT_NOT_FOUND`).',
          409: 'The agent is not suspended, or decision is not its current suspension (`NOT_SUSPENDED`), or it was appealed already (`APPEAL_EXISTS`).',
        },
        response: { 201: Appeal, ...errors(400, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await ctx.appeals.appeal(request.params.did, request.body)),
  );

  app.get(
    '/api/admin/appeals',
    {
      onRequest: operator('GET /api/admin/appeals'),
      schema: {
        tags,
        operationId: 'listAppeals',
        summary: 'Extension: appeals of suspended agents, newest first (for operators)',
        description: 'Needs FEDERATION_ADMIN_TOKEN as a bearer token (docs/moderation.md).',
        security: operatorSecurity,
        querystring: AppealsQuery,
        'x-status-reasons': { 401: OPERATOR_401 },
        response: { 200: AppealsPage, ...errors(400, 401) },
      },
    },
    async (request) => ctx.appeals.list(request.query),
  );
}
