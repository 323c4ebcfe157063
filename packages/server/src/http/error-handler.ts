import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, DatabaseUnavailableError } from '../errors.js';

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

/** Ajv's message, plus the allowed values when an enum was missed ("sort must be one of: a, b"). */
function describeIssue(issue: ValidationIssue | undefined): string {
  const allowed = issue?.keyword === 'enum' ? issue.params?.allowedValues : undefined;
  if (allowed !== undefined) return `must be one of: ${allowed.map(String).join(', ')}`;
  return issue?.message ?? 'is invalid';
}

const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; error: string }> = {
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
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', error: 'Payload too large' },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, code: 'INVALID_CONTENT_TYPE', error: 'Invalid request' },
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
    const details = `${where !== undefined && field !== where ? `${where} ` : ''}${field} ${describeIssue(issue)}`;
    status = 400;
    body = { error: 'Invalid request', details, code: 'VALIDATION_FAILED' };
  } else if (error.code !== undefined && FRAMEWORK_ERRORS[error.code] !== undefined) {
    const known = FRAMEWORK_ERRORS[error.code] as { status: number; code: string; error: string };
    status = known.status;
    body = { error: known.error, details: error.message, code: known.code };
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
  void reply.status(status).send(body);
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send({
    error: 'Not found',
    details: `No route ${request.method} ${request.url.split('?')[0]}; see /openapi.json for the API`,
    code: 'ROUTE_NOT_FOUND',
  });
}
