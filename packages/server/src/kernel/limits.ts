import { PROFILE_LIMITS } from '@agent-registry/protocol';

/**
 * Limits shared by several modules: the profile's (from the protocol package, which clients read too)
 * and the signed messages' and webhook secrets' (the registry's own). A limit one module alone uses
 * lives in that module (tasks/task-limits.ts, capabilities/validation-limits.ts).
 */
export const LIMITS = {
  ...PROFILE_LIMITS,
  referrerMaxLength: 256,
  timestampSkewMs: 5 * 60 * 1000,
  webhookSecretMinLength: 16,
  webhookSecretMaxLength: 256,
} as const;
