import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { classifyError, logClassified, type ParameterSchema } from '../errors.js';
import { lingerAfterAnswer } from './sockets.js';

interface ErrorBody {
  error: string;
  details: string;
  code: string;
  [extra: string]: string;
}

/** The declared schema of one query or path parameter of the route, to state its range in the error. */
function parameterSchema(request: FastifyRequest, part: string, name: string): ParameterSchema | undefined {
  const schema = request.routeOptions.schema as Record<string, unknown> | undefined;
  const declared = schema?.[part] as { properties?: Record<string, ParameterSchema> } | undefined;
  return declared?.properties?.[name];
}

/** Errors as HTTP: the classification (faces/errors.ts) as `{error, details, code}` with its status. */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const classified = classifyError(error, {
    requestId: request.id,
    parameterSchema: (part, name) => parameterSchema(request, part, name),
    contentType: request.headers['content-type'],
  });
  logClassified(request.log, classified, 'unhandled error');
  const { status } = classified;
  const body: ErrorBody = {
    ...classified.extra,
    error: classified.title,
    details: classified.details,
    code: classified.code,
  };
  reply.headers(classified.headers);
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
