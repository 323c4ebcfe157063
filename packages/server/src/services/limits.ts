/** Limits of sections 2.2 and 8 of the interface, plus the ones we decided (docs/decisions.md). */
export const LIMITS = {
  nameMaxLength: 100,
  descriptionMaxLength: 1000,
  tagsMaxCount: 20,
  tagMaxLength: 50,
  urlMaxLength: 2048,
  capabilitiesMinCount: 1,
  capabilitiesMaxCount: 50,
  capabilityTypeMaxLength: 100,
  capabilityDescriptionMaxLength: 1000,
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
  taskErrorMaxLength: 10_000,
  /** How long an Idempotency-Key of an invocation is remembered (docs/decisions.md). */
  idempotencyKeyTtlMs: 24 * 60 * 60 * 1000,
} as const;
