import { appealMessage } from '@agent-registry/protocol';
import type { AgentKey } from '../keys.js';
import type { RequestBodyOf, ResponseOf } from '../types.js';
import type { MessageClock } from './session.js';
import { enc, type Transport } from './transport.js';

export type ReportRequest = RequestBodyOf<'/api/reports', 'post'>;
export type ReportReason = ReportRequest['reason'];
export type ReportReceipt = ResponseOf<'/api/reports', 'post', 201>;
export type ReportList = ResponseOf<'/api/admin/reports', 'get'>;
export type SuspendRequest = RequestBodyOf<'/api/admin/agents/{did}/suspend', 'post'>;
export type RestoreRequest = RequestBodyOf<'/api/admin/agents/{did}/restore', 'post'>;
export type ModerationDecision = ResponseOf<'/api/admin/agents/{did}/suspend', 'post'>;
export type ModerationDecisionList = ResponseOf<'/api/moderation', 'get'>;
export type ModerationAppeal = ResponseOf<'/api/agents/{did}/appeal', 'post', 201>;
export type AppealList = ResponseOf<'/api/admin/appeals', 'get'>;

/**
 * A suspended agent's appeal of its suspension `decision` (its seq in GET /api/moderation), signed with
 * its key since its token is refused (docs/signing.md, "Moderation appeals").
 */
export async function appealSuspension(
  transport: Transport,
  { did, audience, clock }: { did: string; audience: string; clock: MessageClock },
  key: AgentKey,
  decision: number,
  statement: string,
): Promise<ModerationAppeal> {
  const timestamp = clock.next();
  const signature = await key.sign(appealMessage({ did, audience, decision, statement, timestamp }));
  return transport.request('POST', `/api/agents/${enc(did)}/appeal`, {
    body: { decision, statement, audience, timestamp, signature },
  });
}

/**
 * `client.moderation` (docs/moderation.md): reporting an agent or a remote entry with the client's token,
 * the public list of decisions, and the operator's calls, each with the registry's FEDERATION_ADMIN_TOKEN.
 */
export interface ModerationApi {
  /** Reports `target` (a DID or a remote entry id); `task_id` of your task with it makes the report verified. */
  report(request: ReportRequest): Promise<ReportReceipt>;
  /** Every suspension and restoration, newest first; pass `next_cursor` as `cursor` for the next page. */
  decisions(query?: { target?: string; limit?: number; cursor?: string }): Promise<ModerationDecisionList>;
  /** Operator: the reports, newest first. */
  reports(
    adminToken: string,
    query?: {
      target?: string;
      reason?: ReportReason;
      state?: 'open' | 'actioned';
      limit?: number;
      cursor?: string;
    },
  ): Promise<ReportList>;
  /** Operator: suspends an agent. */
  suspend(adminToken: string, did: string, request: SuspendRequest): Promise<ModerationDecision>;
  /** Operator: restores a suspended agent. */
  restore(adminToken: string, did: string, request: RestoreRequest): Promise<ModerationDecision>;
  /** Operator: suspends a remote entry (its id from GET /api/federation/entries). */
  suspendEntry(adminToken: string, id: string, request: SuspendRequest): Promise<ModerationDecision>;
  /** Operator: restores a suspended remote entry. */
  restoreEntry(adminToken: string, id: string, request: RestoreRequest): Promise<ModerationDecision>;
  /** Operator: suspended agents' appeals, newest first. */
  appeals(adminToken: string, query?: { limit?: number; cursor?: string }): Promise<AppealList>;
}

const operator = (adminToken: string) => ({ authorization: `Bearer ${adminToken}` });

export function moderationApi(transport: Transport): ModerationApi {
  return {
    report: (request) => transport.request('POST', '/api/reports', { auth: true, body: request }),
    decisions: (query = {}) => transport.request('GET', '/api/moderation', { query: { ...query } }),
    reports: (adminToken, query = {}) =>
      transport.request('GET', '/api/admin/reports', { headers: operator(adminToken), query: { ...query } }),
    suspend: (adminToken, did, request) =>
      transport.request('POST', `/api/admin/agents/${enc(did)}/suspend`, {
        headers: operator(adminToken),
        body: request,
      }),
    restore: (adminToken, did, request) =>
      transport.request('POST', `/api/admin/agents/${enc(did)}/restore`, {
        headers: operator(adminToken),
        body: request,
      }),
    suspendEntry: (adminToken, id, request) =>
      transport.request('POST', `/api/admin/entries/${enc(id)}/suspend`, {
        headers: operator(adminToken),
        body: request,
      }),
    restoreEntry: (adminToken, id, request) =>
      transport.request('POST', `/api/admin/entries/${enc(id)}/restore`, {
        headers: operator(adminToken),
        body: request,
      }),
    appeals: (adminToken, query = {}) =>
      transport.request('GET', '/api/admin/appeals', { headers: operator(adminToken), query: { ...query } }),
  };
}
