import type { Lifecycle } from '../../kernel/lifecycle.js';
import { CapabilitySchemas } from './capability-schemas.js';
import { COMPILED_SCHEMA_CACHE_MAX_BYTES } from './compiled-schemas.js';
import { InlineValidator } from './inline-validator.js';
import { ValidatorPool } from './validator-pool.js';
import { VALIDATION_LIMITS } from './validation-limits.js';

export interface CapabilitiesModule {
  capabilitySchemas: CapabilitySchemas;
}

/** Capability schemas, checked by a pool of worker threads the lifecycle closes. */
export function createCapabilitiesModule(lifecycle: Lifecycle): CapabilitiesModule {
  const validators = lifecycle.add(
    'validator pool',
    new ValidatorPool({
      size: VALIDATION_LIMITS.workers,
      timeoutMs: VALIDATION_LIMITS.timeoutMs,
      prepareTimeoutMs: VALIDATION_LIMITS.prepareTimeoutMs,
      maxQueued: VALIDATION_LIMITS.maxQueued,
      cacheBytes: COMPILED_SCHEMA_CACHE_MAX_BYTES,
      maxHeapMb: VALIDATION_LIMITS.workerHeapMb,
    }),
    (pool) => pool.close(),
  );
  return {
    capabilitySchemas: new CapabilitySchemas(validators, VALIDATION_LIMITS.timeoutMs, new InlineValidator()),
  };
}
