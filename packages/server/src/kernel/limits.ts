import { PROFILE_LIMITS } from '@agent-registry/protocol';

/**
 * Limits of sections 2.2 and 8 of the interface, plus the ones we decided (docs/decisions.md).
 * Profile limits come from the protocol package, where clients check profiles before sending them.
 */
export const LIMITS = {
  ...PROFILE_LIMITS,
  referrerMaxLength: 256,
  timestampSkewMs: 5 * 60 * 1000,
  webhookSecretMinLength: 16,
  webhookSecretMaxLength: 256,
  /** Invocation input and task output: 1 MiB of serialised JSON (2^20 bytes). */
  invocationPayloadMaxBytes: 1024 * 1024,
  /** Room for the envelope around a 1 MiB input (target_did, capability, timeout_ms). */
  invocationBodyLimitBytes: 1024 * 1024 + 64 * 1024,
  invokeTimeoutDefaultMs: 30_000,
  invokeTimeoutMinMs: 100,
  invokeTimeoutMaxMs: 300_000,
  pendingTasksDefaultLimit: 10,
  pendingTasksMaxLimit: 50,
  pendingTasksMaxWaitSeconds: 60,
  /** A page of pending tasks stops before its inputs pass this many bytes (it always holds one task). */
  pendingTasksPageMaxBytes: 4 * 1024 * 1024,
  /** A task a long poll returned is not returned by another long poll of the agent for this long. */
  pendingTaskLeaseMs: 5_000,
  taskErrorMaxLength: 10_000,
  /** Checking one invocation input against its schema runs in a worker thread and is stopped after this. */
  inputValidationTimeoutMs: 1000,
  /** Parsing the input and compiling its schema first (bounded by the schema limits, about 0.1 s). */
  inputValidationPrepareTimeoutMs: 10_000,
  inputValidationWorkers: 2,
  inputValidationMaxQueued: 256,
  inputValidationWorkerHeapMb: 256,
  /** How long an Idempotency-Key of an invocation is remembered (docs/decisions.md). */
  idempotencyKeyTtlMs: 24 * 60 * 60 * 1000,
} as const;
