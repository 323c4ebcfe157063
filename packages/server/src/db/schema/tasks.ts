import type { Generated } from 'kysely';

export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'timeout';
export type TaskDelivery = 'queue' | 'webhook';
export type TaskErrorCode = 'AGENT_ERROR' | 'WEBHOOK_FAILED';

/** One invocation of one capability; the row is the truth of the task state machine. */
export interface TasksTable {
  id: string;
  caller_did: string;
  target_did: string;
  capability: string;
  /** JSON text of the invocation input. */
  input: string;
  status: TaskStatus;
  delivery_mode: TaskDelivery;
  /** JSON text of the result, once completed. */
  output: string | null;
  error: string | null;
  /** Why a failed task failed: the agent reported it, or the webhook could not deliver it. */
  error_code: TaskErrorCode | null;
  created_at: number;
  deadline_at: number;
  accepted_at: number | null;
  completed_at: number | null;
  /** Bytes of `input` as sent (0 for tasks made before migration 011). */
  input_bytes: Generated<number>;
  /** Until when a long poll that returned this pending task holds it from other long polls. */
  lease_until: number | null;
  /** When the sweep dropped input and output after the retention window (the row itself stays). */
  payload_purged_at: number | null;
}

export const tasksTableName = 'tasks';
export type TasksPartial = { [tasksTableName]: TasksTable };
