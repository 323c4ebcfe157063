/**
 * An Idempotency-Key a caller sent with an invocation: a retry with the same key (same caller, same
 * request) attaches to the task instead of creating another. Remembered until `expires_at`.
 */
export interface InvocationIdempotencyTable {
  caller_did: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the canonical JSON of {target_did, capability, input}. */
  request_hash: string;
  task_id: string;
  created_at: number;
  expires_at: number;
}

export const invocationIdempotencyTableName = 'invocation_idempotency';
export type InvocationIdempotencyPartial = { [invocationIdempotencyTableName]: InvocationIdempotencyTable };
