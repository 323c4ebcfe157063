import type { Lifecycle } from '../../kernel/lifecycle.js';
import { LIMITS } from '../../kernel/limits.js';
import { CapabilitySchemas } from './capability-schemas.js';
import { COMPILED_SCHEMA_CACHE_MAX_BYTES } from './compiled-schemas.js';
import { InlineValidator } from './inline-validator.js';
import { ValidatorPool } from './validator-pool.js';

export interface CapabilitiesModule {
  capabilitySchemas: CapabilitySchemas;
}

/** Capability schemas, checked by a pool of worker threads the lifecycle closes. */
export function createCapabilitiesModule(lifecycle: Lifecycle): CapabilitiesModule {
  const validators = lifecycle.add(
    'validator pool',
    new ValidatorPool({
      size: LIMITS.inputValidationWorkers,
      timeoutMs: LIMITS.inputValidationTimeoutMs,
      prepareTimeoutMs: LIMITS.inputValidationPrepareTimeoutMs,
      maxQueued: LIMITS.inputValidationMaxQueued,
      cacheBytes: COMPILED_SCHEMA_CACHE_MAX_BYTES,
      maxHeapMb: LIMITS.inputValidationWorkerHeapMb,
    }),
    (pool) => pool.close(),
  );
  return {
    capabilitySchemas: new CapabilitySchemas(
      validators,
      LIMITS.inputValidationTimeoutMs,
      new InlineValidator(),
    ),
  };
}
