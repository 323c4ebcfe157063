/**
 * What each HTTP status means across the API: one map, used for every operation of the OpenAPI
 * document. Routes list their own statuses in `response` (with `errors(...)`) and may give a sentence
 * of their own per status in `x-status-reasons`; the statuses every route of a kind can answer are
 * added here, so no route carries a copy. A new branch adding a status or a rule edits this file only.
 */
export const STATUS_MEANINGS: Record<number, string> = {
  200: 'The request succeeded.',
  201: 'Created: the new resource.',
  400: 'The request does not match this document: a path or query parameter, or a body field is missing, malformed or out of range, or the URL is not valid percent-encoded UTF-8 (`INVALID_URL_ENCODING`, any route); `details` names it and says what is accepted.',
  401: 'Missing, malformed or expired bearer token (`TOKEN_MISSING`, `TOKEN_INVALID`, `TOKEN_EXPIRED`), or a token of a deactivated agent. Get a new one at POST /api/auth/token.',
  403: 'Authenticated, but the resource belongs to another agent.',
  404: 'The agent, task, review or resource named in the path or body does not exist (or the agent is deactivated).',
  409: 'The request conflicts with the current state (already registered, already reviewed, task no longer open).',
  413: 'The body is larger than the limit (`PAYLOAD_TOO_LARGE`): 256 KiB by default (BODY_LIMIT_BYTES), 1 MiB on invocation routes.',
  415: 'The body is not JSON (`UNSUPPORTED_MEDIA_TYPE`): send it with `Content-Type: application/json`.',
  429: 'Rate limit exceeded; retry after the number of seconds in `Retry-After`.',
  500: 'Internal error (`INTERNAL_ERROR`); `details` carries the request id to report.',
  502: 'The invoked agent reported a failure (`AGENT_ERROR`) or its webhook failed (`WEBHOOK_FAILED`); `task_id` names the task.',
  503: 'The database is unreachable (`DATABASE_UNAVAILABLE`) or this node is shutting down (`SHUTTING_DOWN`); retry after `Retry-After` seconds, on another node if there is one.',
  504: 'The invoked agent did not answer before the deadline (`INVOCATION_TIMEOUT`); `task_id` names the task.',
};

/** Route properties the statuses depend on, read from the operation in the generated document. */
export interface OperationTraits {
  hasBody: boolean;
  hasParameters: boolean;
  authenticated: boolean;
  rateLimited: boolean;
  /** Answers without touching the database (liveness, version, metrics, static data). */
  noDatabase: boolean;
}

/** The statuses every operation with these traits can answer, whatever the route lists itself. */
export function sharedStatuses(traits: OperationTraits): number[] {
  // Every route answers 400 to a query string that is not valid percent-encoded UTF-8 or carries U+0000.
  const statuses = [400, 500];
  if (traits.hasBody) statuses.push(413, 415);
  if (traits.authenticated) statuses.push(401);
  if (traits.rateLimited) statuses.push(429);
  if (!traits.noDatabase) statuses.push(503);
  return statuses;
}

/** Statuses whose response carries Retry-After. */
export const RETRY_AFTER_STATUSES = new Set([429, 503]);
