import { INVOCATION_LIMITS, PROFILE_LIMITS } from '@agent-registry/protocol';

/**
 * Limits of sections 2.2 and 8 of the interface, plus the ones we decided (docs/decisions/).
 * Profile and invocation limits come from the protocol package, which clients read too; the rest are
 * the registry's own.
 */
export const LIMITS = {
  ...PROFILE_LIMITS,
  referrerMaxLength: 256,
  timestampSkewMs: 5 * 60 * 1000,
  webhookSecretMinLength: 16,
  webhookSecretMaxLength: 256,
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
  /** Checking one invocation input against its schema runs in a worker thread and is stopped after this. */
  inputValidationTimeoutMs: 1000,
  /** Parsing the input and compiling its schema first (bounded by the schema limits, about 0.1 s). */
  inputValidationPrepareTimeoutMs: 10_000,
  inputValidationWorkers: 2,
  inputValidationMaxQueued: 256,
  inputValidationWorkerHeapMb: 256,
  /** How long an Idempotency-Key of an invocation is remembered (docs/decisions/invocation.md). */
  idempotencyKeyTtlMs: 24 * 60 * 60 * 1000,
} as const;
