/** How invocation inputs are checked against their capability's schema in the validator pool. */
export const VALIDATION_LIMITS = {
  /** Checking one invocation input against its schema runs in a worker thread and is stopped after this. */
  timeoutMs: 1000,
  /** Parsing the input and compiling its schema first (bounded by the schema limits, about 0.1 s). */
  prepareTimeoutMs: 10_000,
  workers: 2,
  maxQueued: 256,
  workerHeapMb: 256,
} as const;
