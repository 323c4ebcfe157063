import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { InvokeResult, TaskView } from '../../modules/tasks/schemas.js';

/** The broker's task id is the A2A task id (and context id), so tasks/get reads the tasks table. */
export const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

function agentMessage(taskId: string, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: taskId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

interface TaskFacts {
  taskId: string;
  capability: string;
  targetDid: string;
  at: number;
}

function task(facts: TaskFacts, state: TaskState, extra: Partial<Task> = {}, reason?: string): Task {
  return {
    id: facts.taskId,
    contextId: facts.taskId,
    status: {
      state,
      message: reason === undefined ? undefined : agentMessage(facts.taskId, reason),
      timestamp: new Date(facts.at).toISOString(),
    },
    artifacts: [],
    history: [],
    metadata: { capability: facts.capability, target_did: facts.targetDid },
    ...extra,
  };
}

const outputArtifact = (output: Record<string, unknown>) => ({
  artifactId: 'output',
  name: 'output',
  description: 'The output of the capability (its output_schema applies)',
  parts: [dataPart(output)],
  metadata: undefined,
  extensions: [],
});

export function completedTask(facts: TaskFacts, result: InvokeResult): Task {
  return task(facts, TaskState.TASK_STATE_COMPLETED, { artifacts: [outputArtifact(result.output)] });
}

/** Agent failure and timeout are both A2A "failed"; the reason says which, with the registry's code. */
export function failedTask(facts: TaskFacts, code: string, reason: string, offlineSince?: string): Task {
  // Not sent because the agent is offline: the task's metadata says since when (docs/a2a.md).
  const extra =
    offlineSince === undefined
      ? {}
      : {
          metadata: {
            capability: facts.capability,
            target_did: facts.targetDid,
            offline_since: offlineSince,
          },
        };
  return task(facts, TaskState.TASK_STATE_FAILED, extra, `${code}: ${reason}`);
}

const STATES: Record<TaskView['status'], TaskState> = {
  pending: TaskState.TASK_STATE_SUBMITTED,
  processing: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  timeout: TaskState.TASK_STATE_FAILED,
};

/**
 * The task's history: the one message it had, the caller's input as a data part (A2A's history holds
 * messages; the output is the artifact). Its id is derived from the task's: the client's is not kept.
 */
export function inputHistory(taskId: string, input: Record<string, unknown>): Message[] {
  return [
    {
      messageId: `${taskId}-input`,
      contextId: taskId,
      taskId,
      role: Role.ROLE_USER,
      parts: [dataPart(input)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  ];
}

/**
 * The history an answer carries (A2A v1.0 section 3.2.4): the input message unless `historyLength` is 0;
 * any positive length holds the one message there is.
 */
export function historyOf(
  taskId: string,
  input: Record<string, unknown>,
  historyLength: number | undefined,
): Message[] {
  return historyLength === 0 ? [] : inputHistory(taskId, input);
}

export function taskFromView(view: TaskView): Task {
  const facts = {
    taskId: view.task_id,
    capability: view.capability,
    targetDid: view.target_did,
    at: view.completed_at ?? view.created_at,
  };
  if (view.status === 'completed')
    return task(facts, STATES.completed, { artifacts: [outputArtifact(view.output ?? {})] });
  if (view.status === 'timeout') {
    return failedTask(
      facts,
      'INVOCATION_TIMEOUT',
      view.error ?? 'the agent did not answer before the deadline',
    );
  }
  if (view.status === 'failed')
    return failedTask(facts, 'AGENT_ERROR', view.error ?? 'the agent reported a failure');
  return task(facts, STATES[view.status]);
}
