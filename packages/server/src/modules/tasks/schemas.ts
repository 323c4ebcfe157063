import { Type, type Static } from '@sinclair/typebox';
import type { TaskStatus as TaskStatusName } from '../../db/schema/index.js';
import { LIMITS } from '../../kernel/limits.js';
import { TASK_LIMITS } from './task-limits.js';
import { JsonObject, Nullable, ref, StringEnum } from '../../http/common-schemas.js';

const INVOKE_EXAMPLE = {
  target_did: 'did:web:registry.example:agent:4f2a9c0e1b7d4e8f9a6b3c2d1e0f9a8b',
  capability: 'translation',
  input: { text: 'Hello', to: 'fr' },
  timeout_ms: 30000,
};

export const InvokeRequest = Type.Object(
  {
    target_did: Type.String({ minLength: 1, maxLength: 512 }),
    capability: Type.String({
      minLength: 1,
      maxLength: LIMITS.capabilityTypeMaxLength,
      description: 'A capability type the target offers',
    }),
    input: JsonObject,
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: TASK_LIMITS.invokeTimeoutMinMs,
        maximum: TASK_LIMITS.invokeTimeoutMaxMs,
        default: TASK_LIMITS.invokeTimeoutDefaultMs,
        description: `How long to wait for the result (default ${TASK_LIMITS.invokeTimeoutDefaultMs}, max ${TASK_LIMITS.invokeTimeoutMaxMs})`,
      }),
    ),
  },
  { $id: 'InvokeRequest', examples: [INVOKE_EXAMPLE] },
);
export type InvokeRequest = Static<typeof InvokeRequest>;

export const InvokeHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional. 1-255 visible ASCII characters (e.g. a UUID) naming this invocation. A retry by the same caller with the same key and the same target_did, capability and input attaches to the task the key already names (waiting for its outcome, or answering at once when it has ended) instead of creating another; the same key with a different request is 422 IDEMPOTENCY_KEY_REUSED. Keys are remembered for 24 hours.',
    }),
  ),
});

export const InvokeResponse = Type.Object(
  {
    task_id: Type.String(),
    status: Type.Literal('completed'),
    output: JsonObject,
  },
  { $id: 'InvokeResponse' },
);
export type InvokeResult = Static<typeof InvokeResponse>;

export const TaskParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: TASK_LIMITS.taskIdMaxLength }),
});

const TaskStatus = StringEnum<readonly TaskStatusName[]>([
  'pending',
  'processing',
  'completed',
  'failed',
  'timeout',
]);

export const TaskResponse = Type.Object(
  {
    task_id: Type.String(),
    status: TaskStatus,
    capability: Type.String(),
    target_did: Type.String(),
    caller_did: Type.String(),
    created_at: Type.Integer(),
    deadline_at: Type.Integer(),
    completed_at: Type.Optional(Type.Integer()),
    output: Type.Optional(JsonObject),
    error: Type.Optional(Type.String()),
  },
  { $id: 'Task', description: 'A task as its creator sees it' },
);
/** The task as its creator sees it (GET /api/tasks/{id}). */
export type TaskView = Static<typeof TaskResponse>;

export const PendingTasksQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: TASK_LIMITS.pendingTasksMaxLimit,
      default: TASK_LIMITS.pendingTasksDefaultLimit,
    }),
  ),
  wait: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: TASK_LIMITS.pendingTasksMaxWaitSeconds,
      default: 0,
      description: `Long poll: seconds to wait for a task when none is pending (at most ${TASK_LIMITS.pendingTasksMaxWaitSeconds})`,
    }),
  ),
});

export const PendingTask = Type.Object(
  {
    task_id: Type.String(),
    capability: Type.String(),
    input: JsonObject,
    caller_did: Type.String(),
    created_at: Type.Integer(),
    deadline_at: Type.Integer(),
  },
  { $id: 'PendingTask', description: 'A task waiting for a queue-mode worker' },
);

export const PendingTasksResponse = Type.Object({
  tasks: Type.Array(ref(PendingTask)),
});

export const TaskResultRequest = Type.Object({ output: JsonObject });
export const TaskFailRequest = Type.Object({
  error: Type.String({ minLength: 1, maxLength: TASK_LIMITS.taskErrorMaxLength }),
});
export const TaskAck = Type.Object({ task_id: Type.String(), status: TaskStatus });
export type TaskAck = Static<typeof TaskAck>;

export const WorkerStopped = Type.Object(
  {
    did: Type.String(),
    stopped_at: Nullable(
      Type.Integer({
        description:
          'Epoch ms the stop was recorded: the agent reads offline from then until a worker polls again; null if no worker of the agent was ever seen (nothing to end)',
      }),
    ),
  },
  { $id: 'WorkerStopped' },
);
export type WorkerStopped = Static<typeof WorkerStopped>;
