import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { DeprecatedAuthForm } from '../../kernel/auth-deprecation.js';
import type { Config } from '../../kernel/config.js';
import { markDeprecated } from '../identity/deprecation-headers.js';
import type { AuthenticatedAgent, AuthenticationService } from './authentication.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: AuthenticatedAgent | null;
  }
}

/**
 * Checks the bearer token in `onRequest`, before the body is read or validated: an anonymous request
 * gets its 401 without making the registry parse up to a megabyte first.
 * `allowDeactivatedSelf` lets a deactivated agent reach its own DID (a second DELETE answers 404).
 */
/** What authentication on a route uses of the context. */
export interface AuthenticatedRouteDeps {
  authentication: AuthenticationService;
  config: { identity: Pick<Config['identity'], 'legacyAuthUntil' | 'publicUrl'> };
}

export function authenticated(
  ctx: AuthenticatedRouteDeps,
  options: { allowDeactivatedSelf?: boolean } = {},
): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const params = request.params as { did?: string } | undefined;
    request.caller = await ctx.authentication.authenticate(
      request.headers.authorization,
      options.allowDeactivatedSelf ? { allowDeactivatedFor: params?.did } : {},
    );
    markIfDeprecated(ctx, reply, request.caller.deprecated);
  };
}

/** Deprecation headers on the answer when the request authenticated in a form kept for a window. */
export function markIfDeprecated(
  ctx: AuthenticatedRouteDeps,
  reply: FastifyReply,
  form: DeprecatedAuthForm | undefined,
): void {
  if (form !== undefined)
    markDeprecated(reply, form, ctx.config.identity.legacyAuthUntil, ctx.config.identity.publicUrl);
}

/** The agent `authenticated` put on the request. */
export function callerOf(request: FastifyRequest): AuthenticatedAgent {
  if (request.caller === null) throw new Error('route is missing the authenticated() onRequest hook');
  return request.caller;
}
