import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../kernel/errors.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header; empty for any other header. */
function bearerOf(header: string): string {
  return header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
}

/**
 * The operator's read endpoints (GET /metrics): public unless the registry sets METRICS_TOKEN, then
 * only with it as a bearer token. `what` names the endpoint in the 401's message.
 */
export function operatorTokenCheck(
  token: string | undefined,
  what: string,
): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (token === undefined) return;
    const given = bearerOf(request.headers.authorization ?? '');
    if (!sameSecret(given, token))
      throw new UnauthorizedError(
        'INVALID_METRICS_TOKEN',
        `${what} needs Authorization: Bearer <METRICS_TOKEN> (the token set in the registry configuration)`,
      );
  };
}

/**
 * Who reads an endpoint that has a public summary and an operator's view (GET /api/federation/status):
 * `operator` with any of the configured operator tokens as a bearer token, `public` without an
 * Authorization header (or when no token is configured: nothing to prove). A bearer token that is none
 * of them is refused (401 `INVALID_METRICS_TOKEN`), so a misconfigured monitor learns it at once instead
 * of reading the summary as if it were the whole answer.
 */
export function operatorOrPublic(
  tokens: readonly (string | undefined)[],
  what: string,
): (request: FastifyRequest) => 'operator' | 'public' {
  const configured = tokens.filter((token): token is string => token !== undefined);
  return (request) => {
    if (configured.length === 0) return 'public';
    const header = request.headers.authorization;
    if (header === undefined) return 'public';
    const given = bearerOf(header);
    // Every token is compared, so the answer's time does not say which one matched.
    const matched = configured.map((token) => sameSecret(given, token)).includes(true);
    if (matched) return 'operator';
    throw new UnauthorizedError(
      'INVALID_METRICS_TOKEN',
      `${what} shows the operator's view only with Authorization: Bearer <METRICS_TOKEN> (or FEDERATION_ADMIN_TOKEN); send no Authorization header for the public summary`,
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
    const given = bearerOf(request.headers.authorization ?? '');
    if (!sameSecret(given, token))
      throw new UnauthorizedError(
        'INVALID_ADMIN_TOKEN',
        `${what} needs Authorization: Bearer <FEDERATION_ADMIN_TOKEN> (the token set in the registry configuration)`,
      );
  };
}
