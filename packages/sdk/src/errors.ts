/** What the registry sends with every error: `{error, details, code}` (plus `task_id` for invocations). */
export interface RegistryErrorBody {
  error?: string;
  details?: string;
  code?: string;
  task_id?: string;
  [member: string]: unknown;
}

export interface RegistryErrorInit {
  status: number;
  code: string;
  error: string;
  details: string;
  requestId?: string | undefined;
  body?: RegistryErrorBody | undefined;
  cause?: unknown;
  /** The answer's `Retry-After`, in seconds, when it had one. */
  retryAfterSeconds?: number | undefined;
}

/** An error answer of the registry: `code` is the stable machine code, `details` says what to fix. */
export class RegistryError extends Error {
  /** HTTP status; 0 when no answer arrived (see NetworkError). */
  readonly status: number;
  /** The registry's machine code, e.g. `INVALID_SIGNATURE`, `TOKEN_EXPIRED`. */
  readonly code: string;
  /** Short title, the body's `error`. */
  readonly error: string;
  /** The explanation, the body's `details`. */
  readonly details: string;
  /** The request id the registry logged (`x-request-id`), to quote when reporting a problem. */
  readonly requestId: string | undefined;
  /** The whole error body as received. */
  readonly body: RegistryErrorBody | undefined;
  /** The answer's `Retry-After` in seconds (429, 503), when it had one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: RegistryErrorInit) {
    super(`${init.status === 0 ? 'network' : init.status} ${init.code}: ${init.details}`, {
      cause: init.cause,
    });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.error = init.error;
    this.details = init.details;
    this.requestId = init.requestId;
    this.body = init.body;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** No answer from the registry: connection refused, DNS failure, reset. `status` is 0. */
export class NetworkError extends RegistryError {
  constructor(details: string, cause: unknown) {
    super({ status: 0, code: 'NETWORK_ERROR', error: 'Network error', details, cause });
  }
}

/** An invocation that did not complete; `taskId` names the task (for `getTask` and reviews). */
export class InvocationError extends RegistryError {
  readonly taskId: string | undefined;
  constructor(init: RegistryErrorInit) {
    super(init);
    this.taskId = typeof init.body?.task_id === 'string' ? init.body.task_id : undefined;
  }
}

/** 504 `INVOCATION_TIMEOUT`: the agent did not answer before the deadline. */
export class InvocationTimeoutError extends InvocationError {
  /**
   * Set when the registry answered at once because the agent is offline: the task was never sent and no
   * answer will come (ISO 8601 time a worker of it was last seen). Undefined when it was sent and timed out.
   */
  readonly offlineSince: string | undefined;
  constructor(init: RegistryErrorInit) {
    super(init);
    this.offlineSince = typeof init.body?.offline_since === 'string' ? init.body.offline_since : undefined;
  }
}

/** 502: the invoked agent reported a failure (`details` carries its message). */
export class InvocationFailedError extends InvocationError {}

/** 502 `WEBHOOK_FAILED`: the agent's webhook answered badly or could not be reached. */
export class WebhookFailedError extends InvocationError {}

/** Raised locally, before anything is sent: a method needs something the client was not given. */
export class ClientConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientConfigError';
  }
}

/** The transparency log does not back what the registry served (one class with the protocol package's verifier). */
export { LogVerificationError } from '@agent-registry/protocol';
