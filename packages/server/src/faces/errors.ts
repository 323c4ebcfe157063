import { isDatabaseUnavailable } from '../db/errors.js';
import { ApiError, DatabaseUnavailableError } from '../kernel/errors.js';

/** Longest path parameter the router accepts (a DID, percent-encoded, fits with room). */
export const MAX_PARAM_LENGTH = 512;

/**
 * Who answers for an error: `typed`, an answer the registry gives on purpose (an ApiError, a request
 * the framework refused); `unavailable`, the database (the caller retries); `internal`, a fault of ours,
 * whose text stays in the log.
 */
export type ErrorKind = 'typed' | 'unavailable' | 'internal';

/** An error as every face reports it: REST, MCP, A2A and the pages only write it in their own form. */
export interface ClassifiedError {
  kind: ErrorKind;
  status: number;
  code: string;
  /** A short title, REST's `error` member. */
  title: string;
  /** What went wrong and what to do about it; never internals. */
  details: string;
  /** Headers that go with the answer over HTTP (Retry-After, WWW-Authenticate). */
  headers: Readonly<Record<string, string>>;
  /** Members the answer adds, e.g. the task_id of a failed invocation. */
  extra: Readonly<Record<string, string>>;
  /** What the log records for an unavailable database or an internal error. */
  logged: unknown;
}

/** The declared schema of one query or path parameter. */
export interface ParameterSchema {
  type?: unknown;
  minimum?: number;
  maximum?: number;
}

/** The request an error answers: what a message may name. */
export interface ErrorOrigin {
  /** Named in an internal error's details, so an operator finds its log line. */
  requestId: string;
  /** REST: the route's schema of a query or path parameter, to state its accepted range. */
  parameterSchema?: (part: 'querystring' | 'params', name: string) => ParameterSchema | undefined;
  /** REST: the request's Content-Type, named when the body's type is refused. */
  contentType?: string | undefined;
}

/** One issue of a schema validation error (Ajv's shape, as Fastify passes it on). */
interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword?: string;
  params?: { allowedValues?: unknown[] };
}

/** The members of a framework (Fastify) error this classifier reads; every one may be absent. */
interface FrameworkShape {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
  validation?: ValidationIssue[];
  validationContext?: string;
}

const RANGE_KEYWORDS = new Set(['type', 'minimum', 'maximum']);

/** Ajv's message, the allowed values when an enum was missed, the whole range when a number was out of it. */
function describeIssue(issue: ValidationIssue | undefined, parameter: ParameterSchema | undefined): string {
  const allowed = issue?.keyword === 'enum' ? issue.params?.allowedValues : undefined;
  if (allowed !== undefined) return `must be one of: ${allowed.map(String).join(', ')}`;
  const numeric = parameter?.type === 'integer' || parameter?.type === 'number';
  if (numeric && issue?.keyword !== undefined && RANGE_KEYWORDS.has(issue.keyword)) {
    const kind = parameter.type === 'integer' ? 'an integer' : 'a number';
    if (parameter.minimum !== undefined && parameter.maximum !== undefined)
      return `must be ${kind} from ${parameter.minimum} to ${parameter.maximum}`;
    if (parameter.minimum !== undefined) return `must be ${kind} of at least ${parameter.minimum}`;
    if (parameter.maximum !== undefined) return `must be ${kind} of at most ${parameter.maximum}`;
  }
  return issue?.message ?? 'is invalid';
}

/** "/profile/capabilities/0/type" -> "profile.capabilities[0].type" */
function fieldName(context: string | undefined, instancePath: string): string {
  const path = instancePath
    .split('/')
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('');
  if (path === '') return context ?? 'body';
  return path.startsWith('.') ? path.slice(1) : path;
}

interface FrameworkError {
  status: number;
  code: string;
  title: string;
  /** Our own explanation, when the framework's message does not say what to fix. */
  details?: (origin: ErrorOrigin) => string;
}

const FRAMEWORK_ERRORS: Record<string, FrameworkError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'INVALID_JSON', title: 'Malformed JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'INVALID_JSON', title: 'Malformed JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'INVALID_CONTENT_LENGTH',
    title: 'Invalid request',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    title: 'Unsupported media type',
    details: ({ contentType: given }) =>
      `Send the body as JSON with the header Content-Type: application/json (got ${given === undefined ? 'no Content-Type' : `"${given.slice(0, 100)}"`})`,
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', title: 'Payload too large' },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, code: 'INVALID_CONTENT_TYPE', title: 'Invalid request' },
  FST_ERR_BAD_URL: {
    status: 400,
    code: 'INVALID_URL_ENCODING',
    title: 'Invalid request',
    details: () => 'The path is not valid percent-encoded UTF-8; encode each byte of UTF-8 as %XX',
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 414,
    code: 'URI_TOO_LONG',
    title: 'URI too long',
    details: () =>
      `A path segment is longer than ${MAX_PARAM_LENGTH} characters; no DID or id here is that long`,
  },
};

const NOTHING: Readonly<Record<string, string>> = {};

function typed(status: number, code: string, title: string, details: string): ClassifiedError {
  return { kind: 'typed', status, code, title, details, headers: NOTHING, extra: NOTHING, logged: undefined };
}

/**
 * The one reading of an error, for every face: a typed ApiError as it is; a schema validation error as
 * 400 VALIDATION_FAILED naming the field; a request the framework refused as its status and code; an
 * unreachable database as 503 DATABASE_UNAVAILABLE with Retry-After (typed by the storage layer, or a
 * driver error that escaped it); anything else as a 500 INTERNAL_ERROR that names the request id and
 * nothing of the error.
 */
export function classifyError(error: unknown, origin: ErrorOrigin): ClassifiedError {
  if (error instanceof ApiError) {
    const unavailable = error instanceof DatabaseUnavailableError;
    return {
      kind: unavailable ? 'unavailable' : 'typed',
      status: error.status,
      code: error.code,
      title: error.title,
      details: error.details,
      headers: error.headers,
      extra: error.extra,
      logged: unavailable ? error.cause : undefined,
    };
  }
  const framework = (typeof error === 'object' && error !== null ? error : {}) as FrameworkShape;
  if (framework.validation !== undefined) {
    const issue = framework.validation[0];
    const where = framework.validationContext === 'body' ? undefined : framework.validationContext;
    const field = fieldName(where, issue?.instancePath ?? '');
    const parameter =
      where === 'querystring' || where === 'params' ? origin.parameterSchema?.(where, field) : undefined;
    const details = `${where !== undefined && field !== where ? `${where} ` : ''}${field} ${describeIssue(issue, parameter)}`;
    return typed(400, 'VALIDATION_FAILED', 'Invalid request', details);
  }
  const message = typeof framework.message === 'string' ? framework.message : '';
  const known = typeof framework.code === 'string' ? FRAMEWORK_ERRORS[framework.code] : undefined;
  if (known !== undefined) {
    return typed(known.status, known.code, known.title, known.details?.(origin) ?? message);
  }
  const status = framework.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = typeof framework.code === 'string' ? framework.code : 'BAD_REQUEST';
    return typed(status, code, 'Invalid request', message);
  }
  // After the framework's own: a client that hangs up mid-body is a 400 with the socket's error code.
  if (isDatabaseUnavailable(error)) {
    return { ...classifyError(new DatabaseUnavailableError(error), origin), logged: error };
  }
  return {
    kind: 'internal',
    status: 500,
    code: 'INTERNAL_ERROR',
    title: 'Internal error',
    details: `The registry could not complete the request (request id ${origin.requestId})`,
    headers: NOTHING,
    extra: NOTHING,
    logged: error,
  };
}

/** The log lines an error asks for: a lost database at warn, a fault of ours at error; typed answers none. */
export function logClassified(
  log: { warn(object: object, message: string): void; error(object: object, message: string): void },
  classified: ClassifiedError,
  failed: string,
): void {
  if (classified.kind === 'unavailable') log.warn({ err: classified.logged }, 'database unavailable');
  else if (classified.kind === 'internal') log.error({ err: classified.logged }, failed);
}
