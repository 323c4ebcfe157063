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

/**
 * Input bytes the callers at one client address, or in one network, sent together in one fixed window:
 * new agents registered from the same place share it. Incremented with the caller's count.
 */
export interface InvocationClientQuotaTable {
  /** `address:<ip>`, `network:<ip>/24`, `network:<ip6>/64` or `network:<ip6>/48`. */
  bucket: string;
  window_start: number;
  payload_bytes: number;
}

export const invocationQuotaTableName = 'invocation_quota';
export const invocationClientQuotaTableName = 'invocation_client_quota';
export type InvocationQuotaPartial = { [invocationQuotaTableName]: InvocationQuotaTable } & {
  [invocationClientQuotaTableName]: InvocationClientQuotaTable;
};
