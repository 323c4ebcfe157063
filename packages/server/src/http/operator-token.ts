import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../kernel/errors.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The operator's endpoints (GET /metrics, GET /api/federation/status): public unless the registry sets
 * METRICS_TOKEN, then only with it as a bearer token. `what` names the endpoint in the 401's message.
 */
export function operatorTokenCheck(
  token: string | undefined,
  what: string,
): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (token === undefined) return;
    const header = request.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
    if (!sameSecret(given, token))
      throw new UnauthorizedError(
        'INVALID_METRICS_TOKEN',
        `${what} needs Authorization: Bearer <METRICS_TOKEN> (the token set in the registry configuration)`,
      );
  };
}

/**
 * The operator's writes (POST /api/federation/peers/resume): only with FEDERATION_ADMIN_TOKEN as a
 * bearer token, and refused outright while it is unset. METRICS_TOKEN never authorizes them: it is
 * handed to monitoring, which only reads.
 */
export function operatorWriteCheck(
  token: string | undefined,
  what: string,
): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (token === undefined)
      throw new UnauthorizedError(
        'INVALID_ADMIN_TOKEN',
        `${what} is disabled: the registry sets no FEDERATION_ADMIN_TOKEN (set one, then send it as Authorization: Bearer <token>)`,
      );
    const header = request.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
    if (!sameSecret(given, token))
      throw new UnauthorizedError(
        'INVALID_ADMIN_TOKEN',
        `${what} needs Authorization: Bearer <FEDERATION_ADMIN_TOKEN> (the token set in the registry configuration)`,
      );
  };
}
