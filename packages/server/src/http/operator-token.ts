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
