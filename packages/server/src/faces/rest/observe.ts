import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import type { ErrorCode } from '../../kernel/error-codes.js';
import { ApiError } from '../../kernel/errors.js';
import type { App } from '../../http/types.js';

declare module 'fastify' {
  interface FastifyReply {
    /** The `code` of an error body, for the request's log line. */
    errorCode: string | null;
  }
}

const UNMATCHED = '(unmatched)';
/** pino's numeric levels: a route's `logLevel: 'warn'` (health probes, scrapes) keeps its lines out. */
const LEVELS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};
const CODE = /"code":"([A-Z0-9_]{1,64})"/;
/**
 * 502 and 504 that tell the caller how another agent's task ended (it failed, its webhook failed, it
 * did not answer in time): the caller's and that agent's outcome, not a fault of the registry. Their
 * request line is logged at info, as MCP and A2A log the same outcome (answered 200 there), so that
 * `error` stays for the registry's own faults.
 */
const OTHER_AGENT_OUTCOMES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'AGENT_ERROR',
  'WEBHOOK_FAILED',
  'INVOCATION_TIMEOUT',
]);

function levelOf(status: number, code: string | null): 'error' | 'info' {
  if (status < 500) return 'info';
  return code !== null && OTHER_AGENT_OUTCOMES.has(code as ErrorCode) ? 'info' : 'error';
}

/**
 * One log line per request, written when the response is sent: method, route template, URL, status,
 * error code, duration, request id and the authenticated caller; and the request metrics. Callback
 * hooks, not async ones: they run on every request.
 */
export function observeRequests(app: App, ctx: AppContext): void {
  app.decorateReply('errorCode', null);
  const { observeRequest } = ctx.metrics;

  // Every response carries its request id, and nosniff: JSON bodies hold stored text (names,
  // descriptions) that a browser must never sniff into HTML. For errors, the code is read from the JSON
  // body for the log line.
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    void reply.header('x-content-type-options', 'nosniff');
    if (reply.statusCode >= 400 && typeof payload === 'string') {
      const match = CODE.exec(payload);
      if (match !== null) reply.errorCode = match[1] ?? null;
    }
    done(null, payload);
  });

  app.addHook('onError', (_request, _reply, error, done) => {
    const unavailable = error instanceof ApiError && error.code === 'DATABASE_UNAVAILABLE';
    if (unavailable || isDatabaseUnavailable(error)) ctx.telemetry.databaseError({ error });
    done();
  });

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const durationMs = reply.elapsedTime;
    observeRequest(request.method, route, reply.statusCode, durationMs / 1000);
    const level = levelOf(reply.statusCode, reply.errorCode);
    if ((LEVELS[request.log.level] ?? 30) <= (level === 'error' ? 50 : 30)) {
      const line: Record<string, unknown> = {
        method: request.method,
        route,
        url: request.url,
        status: reply.statusCode,
        durationMs: Math.round(durationMs * 10) / 10,
      };
      if (reply.errorCode !== null) line.code = reply.errorCode;
      if (request.caller !== null) line.did = request.caller.did;
      request.log[level](line, `${request.method} ${request.url} ${reply.statusCode}`);
    }
    done();
  });
}
