import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { classifyError, logClassified } from '../errors.js';
import { ARD_BASE } from '../../modules/ard/entries.js';
import { ARD_BODY_EXAMPLES } from '../../modules/ard/schemas.js';

/** ARD's error codes (ard-spec Appendix B) by HTTP status; the registry's own code says the rest. */
function ardErrorCode(status: number): string {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RATE_LIMIT_EXCEEDED';
  if (status === 503) return 'UNAVAILABLE';
  if (status >= 500) return 'INTERNAL_ERROR';
  return 'INVALID_ARGUMENT';
}

/** Whether a request is one of the ARD API's, whose errors use ARD's envelope. */
export function isArdRequest(url: string): boolean {
  return url === ARD_BASE || url.startsWith(`${ARD_BASE}/`) || url.startsWith(`${ARD_BASE}?`);
}

/**
 * Errors on the ARD API as ARD's envelope `{errorCode, message}`, with the status the registry's own
 * classification gives (faces/errors.ts); `code` keeps the registry's finer code beside it.
 */
export function handleArdError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const classified = classifyError(error, {
    requestId: request.id,
    contentType: request.headers['content-type'],
  });
  logClassified(request.log, classified, 'unhandled error');
  reply.headers(classified.headers);
  reply.header('x-content-type-options', 'nosniff');
  void reply.status(classified.status).send({
    errorCode: ardErrorCode(classified.status),
    message: withExpectedBody(classified.details, classified.status, request),
    code: classified.code,
  });
}

/** A refused body of a POST route ends with the body that route expects: ARD clients write it by hand. */
function withExpectedBody(message: string, status: number, request: FastifyRequest): string {
  if (request.method !== 'POST' || (status !== 400 && status !== 415)) return message;
  const route = request.url.split('?')[0];
  const example =
    route === `${ARD_BASE}/search`
      ? ARD_BODY_EXAMPLES.search
      : route === `${ARD_BASE}/explore`
        ? ARD_BODY_EXAMPLES.explore
        : undefined;
  return example === undefined ? message : `${message}; the body is JSON like ${example}`;
}

export function handleArdNotFound(request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send({
    errorCode: 'NOT_FOUND',
    message: `No route ${request.method} ${request.url.split('?')[0]}; the ARD API is POST ${ARD_BASE}/search, POST ${ARD_BASE}/explore, GET ${ARD_BASE}/agents and GET ${ARD_BASE}/agents/{identifier}`,
    code: 'ROUTE_NOT_FOUND',
  });
}
