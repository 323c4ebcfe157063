import { INVOCATION_LIMITS } from '@agent-registry/protocol';

/**
 * Limits of invocations and tasks (section 8 of the interface, plus the ones we decided). The protocol
 * package's invocation limits are the ones clients read too; the rest are the registry's own.
 */
export const TASK_LIMITS = {
  /** Invocation input and task output: 1 MiB of serialised JSON (2^20 bytes). */
  invocationPayloadMaxBytes: INVOCATION_LIMITS.payloadMaxBytes,
  /** Room for the envelope around a 1 MiB input (target_did, capability, timeout_ms). */
  invocationBodyLimitBytes: INVOCATION_LIMITS.payloadMaxBytes + 64 * 1024,
  invokeTimeoutDefaultMs: INVOCATION_LIMITS.timeoutDefaultMs,
  invokeTimeoutMinMs: INVOCATION_LIMITS.timeoutMinMs,
  invokeTimeoutMaxMs: INVOCATION_LIMITS.timeoutMaxMs,
  pendingTasksDefaultLimit: INVOCATION_LIMITS.pendingTasksDefaultLimit,
  pendingTasksMaxLimit: INVOCATION_LIMITS.pendingTasksMaxLimit,
  pendingTasksMaxWaitSeconds: INVOCATION_LIMITS.pendingTasksMaxWaitSeconds,
  /** A page of pending tasks stops before its inputs pass this many bytes (it always holds one task). */
  pendingTasksPageMaxBytes: 4 * 1024 * 1024,
  /** A task a long poll returned is not returned by another long poll of the agent for this long. */
  pendingTaskLeaseMs: 5_000,
  taskErrorMaxLength: INVOCATION_LIMITS.taskErrorMaxLength,
  taskIdMaxLength: INVOCATION_LIMITS.taskIdMaxLength,
  /** How long an Idempotency-Key of an invocation is remembered (docs/decisions/invocation.md). */
  idempotencyKeyTtlMs: 24 * 60 * 60 * 1000,
} as const;
