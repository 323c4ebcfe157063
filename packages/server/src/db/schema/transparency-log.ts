/**
 * One row per change-feed stamp since the transparency log began: the change sequence number, what
 * the change was, and the agent's public profile columns as that change left them (JSON). The log's
 * leaf for the row is derived from it (modules/transparency-log/leaf.ts). Written by the stamp itself,
 * in the writing transaction, so the log holds exactly the feed's events in the feed's order.
 */
export interface LogRecordsTable {
  seq: number;
  operation: string;
  record: string;
}

/** One row (id 1): the first change sequence number the log holds (leaf index = seq - first_seq). */
export interface LogStartTable {
  id: number;
  first_seq: number;
}

export const logRecordsTableName = 'log_records';
export const logStartTableName = 'log_start';
export type TransparencyLogPartial = {
  [logRecordsTableName]: LogRecordsTable;
  [logStartTableName]: LogStartTable;
};
