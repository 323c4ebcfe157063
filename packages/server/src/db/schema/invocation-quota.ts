/**
 * Invocations and input bytes one caller sent in one fixed window (starting at `window_start`, epoch
 * ms). Incremented in the transaction that creates the task, so the count holds across nodes.
 */
export interface InvocationQuotaTable {
  caller_did: string;
  window_start: number;
  invocations: number;
  payload_bytes: number;
}

export const invocationQuotaTableName = 'invocation_quota';
export type InvocationQuotaPartial = { [invocationQuotaTableName]: InvocationQuotaTable };
