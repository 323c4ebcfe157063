import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../context.js';
import { LIMITS } from '../../services/limits.js';
import { bearerAuth, errors } from '../schemas/common.js';
import {
  InvokeHeaders,
  InvokeRequest,
  InvokeResponse,
  PendingTasksQuery,
  PendingTasksResponse,
  TaskAck,
  TaskFailRequest,
  TaskParams,
  TaskResponse,
  TaskResultRequest,
} from '../schemas/invocation.js';
import type { App } from '../types.js';
import { authenticated, callerOf } from '../authenticate.js';

/** Aborts when the client closes the connection before we answer. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

export function invocationRoutes(app: App, ctx: AppContext): void {
  const tags = ['Invocation'];
  const workerTags = ['Agent tasks'];

  app.post(
    '/api/invoke',
    {
      onRequest: authenticated(ctx),
      bodyLimit: LIMITS.invocationBodyLimitBytes,
      schema: {
        tags,
        summary: 'Invoke a capability of another agent and wait for its result',
        description:
          'Blocks until the result (200), the agent or webhook failure (502) or the deadline (504). Send an Idempotency-Key header to make retries safe: a retry after a dropped connection attaches to the same task.',
        security: bearerAuth,
        headers: InvokeHeaders,
        body: InvokeRequest,
        response: { 200: InvokeResponse, ...errors(400, 401, 404, 413, 422, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const key = request.headers['idempotency-key'];
      return ctx.invocation.invoke(caller, request.body, clientGone(reply), key);
    },
  );

  app.get(
    '/api/tasks/:id',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        summary: 'Read a task you created',
        security: bearerAuth,
        params: TaskParams,
        response: { 200: TaskResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.invocation.getTask(caller, request.params.id);
    },
  );

  app.get(
    '/api/agent/tasks',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags: workerTags,
        summary: 'Pending tasks for the calling queue-mode agent, oldest first (optional long poll)',
        security: bearerAuth,
        querystring: PendingTasksQuery,
        response: { 200: PendingTasksResponse, ...errors(400, 401) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { limit, wait } = request.query;
      return { tasks: await ctx.agentTasks.listPending(caller, limit, wait, clientGone(reply)) };
    },
  );

  app.post(
    '/api/agent/tasks/:id/accept',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags: workerTags,
        summary: 'Claim a pending task (pending -> processing)',
        security: bearerAuth,
        params: TaskParams,
        response: { 200: TaskAck, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.agentTasks.accept(caller, request.params.id);
    },
  );

  app.post(
    '/api/agent/tasks/:id/result',
    {
      onRequest: authenticated(ctx),
      bodyLimit: LIMITS.invocationBodyLimitBytes,
      schema: {
        tags: workerTags,
        summary: 'Report the output of a task (completes it)',
        security: bearerAuth,
        params: TaskParams,
        body: TaskResultRequest,
        response: { 200: TaskAck, ...errors(400, 401, 403, 404, 409, 413) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.agentTasks.result(caller, request.params.id, request.body.output);
    },
  );

  app.post(
    '/api/agent/tasks/:id/fail',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags: workerTags,
        summary: 'Report that a task failed',
        security: bearerAuth,
        params: TaskParams,
        body: TaskFailRequest,
        response: { 200: TaskAck, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return ctx.agentTasks.fail(caller, request.params.id, request.body.error);
    },
  );
}
