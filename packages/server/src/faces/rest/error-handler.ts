import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, DatabaseUnavailableError } from '../../kernel/errors.js';
import { lingerAfterAnswer } from './sockets.js';

/** Longest path parameter the router accepts (a DID, percent-encoded, fits with room). */
export const MAX_PARAM_LENGTH = 512;

interface ErrorBody {
  error: string;
  details: string;
  code: string;
  [extra: string]: string;
}

interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword?: string;
  params?: { allowedValues?: unknown[] };
}

interface NumberSchema {
  type?: unknown;
  minimum?: number;
  maximum?: number;
}

const RANGE_KEYWORDS = new Set(['type', 'minimum', 'maximum']);

/** The declared schema of one query or path parameter, to state its range in the error. */
function parameterSchema(request: FastifyRequest, context: string, name: string): NumberSchema | undefined {
  const schema = request.routeOptions.schema as Record<string, unknown> | undefined;
  const part = schema?.[context] as { properties?: Record<string, NumberSchema> } | undefined;
  return part?.properties?.[name];
}

/** Ajv's message, the allowed values when an enum was missed, the whole range when a number was out of it. */
function describeIssue(issue: ValidationIssue | undefined, parameter: NumberSchema | undefined): string {
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

interface FrameworkError {
  status: number;
  code: string;
  error: string;
  /** Our own explanation, when Fastify's message does not say what to fix. */
  details?: (request: FastifyRequest) => string;
}

const FRAMEWORK_ERRORS: Record<string, FrameworkError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'INVALID_JSON', error: 'Malformed JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'INVALID_JSON', error: 'Malformed JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'INVALID_CONTENT_LENGTH',
    error: 'Invalid request',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    error: 'Unsupported media type',
    details: (request) => {
      const given = request.headers['content-type'];
      return `Send the body as JSON with the header Content-Type: application/json (got ${given === undefined ? 'no Content-Type' : `"${given.slice(0, 100)}"`})`;
    },
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', error: 'Payload too large' },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, code: 'INVALID_CONTENT_TYPE', error: 'Invalid request' },
  FST_ERR_BAD_URL: {
    status: 400,
    code: 'INVALID_URL_ENCODING',
    error: 'Invalid request',
    details: () => 'The path is not valid percent-encoded UTF-8; encode each byte of UTF-8 as %XX',
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 414,
    code: 'URI_TOO_LONG',
    error: 'URI too long',
    details: () =>
      `A path segment is longer than ${MAX_PARAM_LENGTH} characters; no DID or id here is that long`,
  },
};

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

/** The one place errors become HTTP: typed ApiErrors, framework errors, and everything else as a 500. */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let status: number;
  let body: ErrorBody;
  if (error instanceof ApiError) {
    if (error instanceof DatabaseUnavailableError)
      request.log.warn({ err: error.cause }, 'database unavailable');
    status = error.status;
    body = { ...error.extra, error: error.title, details: error.details, code: error.code };
    reply.headers(error.headers);
  } else if (error.validation !== undefined) {
    const issue = error.validation[0] as ValidationIssue | undefined;
    const where = error.validationContext === 'body' ? undefined : error.validationContext;
    const field = fieldName(where, issue?.instancePath ?? '');
    const parameter =
      where === 'querystring' || where === 'params' ? parameterSchema(request, where, field) : undefined;
    const details = `${where !== undefined && field !== where ? `${where} ` : ''}${field} ${describeIssue(issue, parameter)}`;
    status = 400;
    body = { error: 'Invalid request', details, code: 'VALIDATION_FAILED' };
  } else if (error.code !== undefined && FRAMEWORK_ERRORS[error.code] !== undefined) {
    const known = FRAMEWORK_ERRORS[error.code] as FrameworkError;
    status = known.status;
    body = { error: known.error, details: known.details?.(request) ?? error.message, code: known.code };
  } else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    status = error.statusCode;
    body = { error: 'Invalid request', details: error.message, code: error.code ?? 'BAD_REQUEST' };
  } else {
    request.log.error({ err: error }, 'unhandled error');
    status = 500;
    body = {
      error: 'Internal error',
      details: `The registry could not complete the request (request id ${request.id})`,
      code: 'INTERNAL_ERROR',
    };
  }
  // Errors raised before routing skip the onSend hooks that add it to every other answer.
  reply.header('x-content-type-options', 'nosniff');
  if (status === 413 && !request.raw.complete) {
    // The client may still be sending: it reads this answer, then the connection closes.
    reply.header('connection', 'close');
    lingerAfterAnswer(request);
  }
  void reply.status(status).send(body);
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send({
    error: 'Not found',
    details: `No route ${request.method} ${request.url.split('?')[0]}; see /openapi.json for the API`,
    code: 'ROUTE_NOT_FOUND',
  });
}
