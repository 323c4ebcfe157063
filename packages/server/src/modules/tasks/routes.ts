import type { FastifyReply } from 'fastify';
import type { AgentTaskService } from './agent-tasks.js';
import type { InvocationService } from './invocation.js';
import { TASK_LIMITS } from './task-limits.js';
import { bearerAuth, errors, ref } from '../../http/common-schemas.js';
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
  WorkerStopped,
} from './schemas.js';
import type { App } from '../../http/types.js';
import { authenticated, callerOf, type AuthenticatedRouteDeps } from '../agents/authenticate.js';

/** Aborts when the client closes the connection before we answer. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

/** What the invocation and task routes use of the context. */
export interface InvocationRouteDeps extends AuthenticatedRouteDeps {
  agentTasks: AgentTaskService;
  invocation: InvocationService;
}

export function invocationRoutes(app: App, ctx: InvocationRouteDeps): void {
  const tags = ['Invocation'];
  const workerTags = ['Agent tasks'];

  app.post(
    '/api/invoke',
    {
      onRequest: authenticated(ctx),
      bodyLimit: TASK_LIMITS.invocationBodyLimitBytes,
      schema: {
        tags,
        operationId: 'invokeAgent',
        summary: 'Invoke a capability of another agent and wait for its result',
        description:
          'Blocks until the result (200), the agent or webhook failure (502) or the deadline (504). Send an Idempotency-Key header to make retries safe: a retry after a dropped connection attaches to the same task.',
        security: bearerAuth,
        headers: InvokeHeaders,
        body: ref(InvokeRequest),
        'x-status-reasons': {
          200: 'The agent completed the task: its output.',
          400: 'A field is invalid, the target does not accept invocations (`INVOCATION_DISABLED`), does not offer the capability (`CAPABILITY_NOT_OFFERED`), or input does not match its input_schema (`INPUT_SCHEMA_MISMATCH`).',
          404: 'No active agent has target_did (`AGENT_NOT_FOUND`).',
          413: 'The body is larger than 1 MiB, or input larger than 1 MiB of JSON (`PAYLOAD_TOO_LARGE`).',
          422: 'The Idempotency-Key was already used by this caller for a different request (`IDEMPOTENCY_KEY_REUSED`).',
          429: 'The caller, or every caller at its client address or network together, sent more invocations or input bytes than the window allows (`INVOCATION_RATE_LIMITED`), or the caller or the target holds as many open tasks or bytes as allowed (`TOO_MANY_OPEN_TASKS`); `Retry-After` says when to try again.',
          503: 'The open tasks of the whole registry hold as much input as it keeps (`TASK_STORAGE_FULL`), or the registry is shutting down (`SHUTTING_DOWN`) or its database is unavailable; `Retry-After` says when to try again.',
        },
        response: { 200: ref(InvokeResponse), ...errors(400, 401, 404, 413, 422, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const key = request.headers['idempotency-key'];
      return ctx.invocation.invoke(caller, request.body, { address: request.ip }, clientGone(reply), key);
    },
  );

  app.get(
    '/api/tasks/:id',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags,
        operationId: 'getTask',
        summary: 'Read a task you created',
        description: 'Status, output or error of a task the caller created with POST /api/invoke.',
        security: bearerAuth,
        params: TaskParams,
        'x-status-reasons': {
          403: 'The task was created by another agent (`NOT_TASK_CREATOR`).',
          404: 'No task has this id (`TASK_NOT_FOUND`).',
        },
        response: { 200: ref(TaskResponse), ...errors(400, 401, 403, 404) },
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
        operationId: 'listPendingTasks',
        summary: 'Pending tasks for the calling queue-mode agent, oldest first (optional long poll)',
        description:
          'Tasks waiting for the calling agent, oldest first. With wait > 0 the request returns as soon as a ' +
          'task arrives, or with an empty list when wait seconds pass, and the tasks it returns are held ' +
          "from the agent's other long polls for 5 s unless accepted first. A page stops before its inputs " +
          'pass 4 MiB (it always holds one task): ask again after accepting for the rest.',
        security: bearerAuth,
        querystring: PendingTasksQuery,
        'x-status-reasons': {
          429: 'The agent already has TASK_MAX_POLLS_PER_AGENT requests for pending tasks in progress on this node (`TOO_MANY_POLLS`).',
        },
        response: { 200: PendingTasksResponse, ...errors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { limit, wait } = request.query;
      const body = await ctx.agentTasks.listPending(
        caller,
        limit ?? TASK_LIMITS.pendingTasksDefaultLimit,
        wait ?? 0,
        clientGone(reply),
      );
      // Already JSON, with each stored input as stored: sent as is, not serialised again.
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );

  app.post(
    '/api/agent/offline',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags: workerTags,
        operationId: 'reportWorkerStopped',
        summary: "Say that the calling agent's worker is stopping: the agent reads offline at once",
        description:
          'Extension (docs/availability.md). A queue worker that shuts down cleanly calls this after its last ' +
          'poll ends: availability reads `offline` on the next request, search leaves the agent out of ' +
          '`available=true`, and invocations are refused at once as offline (not sent) instead of waiting ' +
          'their timeout out through the 90-second online window. The next poll of any worker of the agent ' +
          'makes it online again. The SDK worker and `agent-registry worker` call it when they stop.',
        security: bearerAuth,
        'x-status-reasons': {
          200: 'Recorded; `stopped_at` null when no worker of the agent was ever seen (nothing to end).',
        },
        response: { 200: WorkerStopped, ...errors(401) },
      },
    },
    async (request) => ctx.agentTasks.workerStopped(callerOf(request)),
  );

  app.post(
    '/api/agent/tasks/:id/accept',
    {
      onRequest: authenticated(ctx),
      schema: {
        tags: workerTags,
        operationId: 'acceptTask',
        summary: 'Claim a pending task (pending -> processing)',
        description: 'Claims a pending task for the calling agent; only one worker can claim a task.',
        'x-status-reasons': {
          403: 'The task is for another agent (`NOT_YOUR_TASK`).',
          404: 'No task has this id (`TASK_NOT_FOUND`).',
          409: 'The task is no longer pending (`TASK_NOT_OPEN`) or its deadline passed (`TASK_EXPIRED`).',
        },
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
      bodyLimit: TASK_LIMITS.invocationBodyLimitBytes,
      schema: {
        tags: workerTags,
        operationId: 'submitTaskResult',
        summary: 'Report the output of a task (completes it)',
        description:
          'Completes a pending or processing task of the calling agent with its output; the invoker gets it at once.',
        'x-status-reasons': {
          403: 'The task is for another agent (`NOT_YOUR_TASK`).',
          404: 'No task has this id (`TASK_NOT_FOUND`).',
          409: 'The task already ended (`TASK_NOT_OPEN`) or its deadline passed (`TASK_EXPIRED`).',
          413: 'The body is larger than 1 MiB, or output larger than 1 MiB of JSON (`PAYLOAD_TOO_LARGE`).',
        },
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
        operationId: 'failTask',
        summary: 'Report that a task failed',
        description:
          'Fails a pending or processing task of the calling agent; the invoker gets 502 AGENT_ERROR with the message.',
        'x-status-reasons': {
          403: 'The task is for another agent (`NOT_YOUR_TASK`).',
          404: 'No task has this id (`TASK_NOT_FOUND`).',
          409: 'The task already ended (`TASK_NOT_OPEN`) or its deadline passed (`TASK_EXPIRED`).',
        },
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
