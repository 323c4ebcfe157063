import { ApiError } from '../../kernel/errors.js';
import type { InvokeResult } from './schemas.js';
import type { TaskRow } from './tasks-store.js';

/** An ended task as the invocation's answer: its output, or the 504 or 502 that says why there is none. */
export function invocationResult(task: TaskRow, workerNote = ''): InvokeResult {
  if (task.status === 'completed') {
    return {
      task_id: task.id,
      status: 'completed',
      output: JSON.parse(task.output ?? '{}') as Record<string, unknown>,
    };
  }
  const extra = { task_id: task.id };
  if (task.status === 'timeout') {
    throw new ApiError(
      504,
      'INVOCATION_TIMEOUT',
      'Invocation timed out',
      `The agent did not answer before the deadline (${Number(task.deadline_at) - Number(task.created_at)} ms)${workerNote}`,
      {},
      extra,
    );
  }
  const webhook = task.error_code === 'WEBHOOK_FAILED';
  throw new ApiError(
    502,
    task.error_code ?? 'AGENT_ERROR',
    webhook ? 'Webhook failed' : 'Agent error',
    webhook ? (task.error ?? 'the webhook failed') : `The agent reported: ${task.error ?? 'failure'}`,
    {},
    extra,
  );
}

/**
 * The 504 of an invocation answered at once because no worker of its agent was seen for longer than its
 * timeout. The interface fixes 504 INVOCATION_TIMEOUT for it; `offline_since` (the last sighting) is the
 * machine-readable sign that the task was never sent, so no later answer can come.
 */
export function workerOffline(
  taskId: string,
  offline: { lastSeenAt: number; stoppedAt?: number },
  now: number,
  timeoutMs: number,
  capability: string,
): ApiError {
  const { lastSeenAt, stoppedAt } = offline;
  const ago = Math.round((now - lastSeenAt) / 1000);
  const seen = new Date(lastSeenAt).toISOString();
  const query = `capability=${encodeURIComponent(capability)}&available=true`;
  const why =
    stoppedAt === undefined
      ? `no worker of it has polled for tasks since ${seen} (${ago} s ago, longer than this call's timeout of ${timeoutMs} ms)`
      : `its worker stopped at ${new Date(stoppedAt).toISOString()} and said so, and none has polled since`;
  return new ApiError(
    504,
    'INVOCATION_TIMEOUT',
    'Invocation timed out',
    `The agent is offline: ${why}, so the task was not sent and will not be answered (it is ` +
      `recorded as a timeout). An agent online now with the same capability: GET /api/agents/search?${query} ` +
      `(MCP: search_agents with capability "${capability}" and available true)`,
    {},
    { task_id: taskId, offline_since: seen },
  );
}
