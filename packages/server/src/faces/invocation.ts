import type { AppContext } from '../context.js';
import { ApiError } from '../kernel/errors.js';
import type { AgentProfile } from '../modules/agents/schemas.js';
import type { AuthenticatedAgent } from '../modules/agents/authentication.js';
import { InvokeRequest, type InvokeResult, type TaskView } from '../modules/tasks/schemas.js';
import { ArgumentValidator, selfContained } from './schemas.js';

/** What the agent did with a task that was created: the faces report these as results, not errors. */
export type TaskOutcome =
  | { ok: true; result: InvokeResult }
  | {
      ok: false;
      taskId: string;
      outcome: 'failed' | 'timeout';
      code: string;
      reason: string;
      /** The agent was offline and the task never sent: its last sighting (ISO 8601). */
      offlineSince?: string;
    };

export const invokeArguments = new ArgumentValidator<InvokeRequest>(selfContained(InvokeRequest));

/**
 * One invocation through the broker, as POST /api/invoke runs it. Errors that carry a task id are the
 * agent's outcome (it failed, or did not answer in time); every other error is the caller's and is
 * rethrown for the face to map (bad input, unknown agent, 1 MiB, shutdown).
 */
export async function invokeThroughBroker(
  ctx: AppContext,
  caller: AuthenticatedAgent,
  args: unknown,
  clientGone: AbortSignal,
  address: string,
): Promise<TaskOutcome> {
  const request = invokeArguments.parse(args);
  try {
    return { ok: true, result: await ctx.invocation.invoke(caller, request, { address }, clientGone) };
  } catch (error) {
    return agentOutcome(error);
  }
}

/**
 * One invocation through the broker that answers at once with the task as created (pending), for the
 * faces whose protocol lets a client return before the end (A2A `returnImmediately`). An agent known to be
 * offline still gets its task recorded as a timeout, reported as the outcome.
 */
export async function submitThroughBroker(
  ctx: AppContext,
  caller: AuthenticatedAgent,
  args: unknown,
  address: string,
): Promise<{ ok: true; task: TaskView } | Extract<TaskOutcome, { ok: false }>> {
  const request = invokeArguments.parse(args);
  try {
    return { ok: true, task: await ctx.invocation.submit(caller, request, { address }) };
  } catch (error) {
    return agentOutcome(error);
  }
}

/** An error carrying a task id as the agent's outcome; any other error is rethrown. */
function agentOutcome(error: unknown): Extract<TaskOutcome, { ok: false }> {
  const taskId = error instanceof ApiError ? error.extra.task_id : undefined;
  if (!(error instanceof ApiError) || taskId === undefined || error.status === 503) throw error;
  return {
    ok: false,
    taskId,
    outcome: error.code === 'INVOCATION_TIMEOUT' ? 'timeout' : 'failed',
    code: error.code,
    reason: error.details,
    ...(error.extra.offline_since === undefined ? {} : { offlineSince: error.extra.offline_since }),
  };
}

/** Whether a face offers a way to call the agent (tools, an A2A interface). */
export function invocable(profile: AgentProfile): boolean {
  return profile.status === 'active' && profile.invocation_enabled && profile.delivery_mode !== 'none';
}
