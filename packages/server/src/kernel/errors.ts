import type { ErrorCode } from './error-codes.js';

/**
 * Typed errors carry their HTTP status and a stable machine code; faces/errors.ts classifies them for
 * every face, and REST writes them as `{error, details, code}`. Never match errors by message.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly title: string,
    readonly details: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** Members added to the error body, e.g. the task_id of a failed invocation. */
    readonly extra: Readonly<Record<string, string>> = {},
  ) {
    super(`${title}: ${details}`);
    this.name = new.target.name;
  }
}

export class BadRequestError extends ApiError {
  constructor(code: ErrorCode, details: string, title = 'Invalid request') {
    super(400, code, title, details);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(code: ErrorCode, details: string) {
    super(401, code, 'Unauthorized', details, { 'www-authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends ApiError {
  constructor(code: ErrorCode, details: string) {
    super(403, code, 'Forbidden', details);
  }
}

export class NotFoundError extends ApiError {
  constructor(code: ErrorCode, details: string, title = 'Not found') {
    super(404, code, title, details);
  }
}

export class ConflictError extends ApiError {
  constructor(code: ErrorCode, details: string, title = 'Conflict') {
    super(409, code, title, details);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(details: string) {
    super(413, 'PAYLOAD_TOO_LARGE', 'Payload too large', details);
  }
}

export class TooManyRequestsError extends ApiError {
  constructor(code: ErrorCode, details: string, retryAfterSeconds: number) {
    super(429, code, 'Too many requests', details, { 'retry-after': String(retryAfterSeconds) });
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(code: ErrorCode, details: string, retryAfterSeconds = 1) {
    super(503, code, 'Service unavailable', details, { 'retry-after': String(retryAfterSeconds) });
  }
}

/**
 * The database could not be reached or dropped the connection mid-request (restart, failover,
 * SQLITE_BUSY beyond busy_timeout, disk I/O error). Raised by the storage layer's classifier
 * (db/unavailability.ts), never by matching message text.
 */
export class DatabaseUnavailableError extends ApiError {
  constructor(cause: unknown, details = 'The database is not reachable right now; retry shortly') {
    super(503, 'DATABASE_UNAVAILABLE', 'Service unavailable', details, { 'retry-after': '1' });
    this.cause = cause;
  }
}

export const agentNotFound = (did: string): NotFoundError =>
  new NotFoundError('AGENT_NOT_FOUND', `No active agent is registered with DID ${did}`, 'Agent not found');

/** An agent an operator suspended (docs/moderation.md): not invocable, its token refused. */
export const agentSuspended = (did: string): ForbiddenError =>
  new ForbiddenError(
    'AGENT_SUSPENDED',
    `The agent ${did} is suspended by this registry's operator; GET /api/agents/{did} says why (moderation), and GET /api/moderation lists the decision`,
  );

export const taskNotFound = (taskId: string): NotFoundError =>
  new NotFoundError('TASK_NOT_FOUND', `No task ${taskId}`, 'Task not found');

export const shuttingDown = (details: string, extra: Record<string, string> = {}): ApiError =>
  new ApiError(503, 'SHUTTING_DOWN', 'Service unavailable', details, { 'retry-after': '1' }, extra);
