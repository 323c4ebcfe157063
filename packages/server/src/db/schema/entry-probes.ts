/** The observed statuses of a probed remote entry (docs/federation.md, "Observed"). */
export type ObservedStatusColumn = 'answers' | 'needs_auth' | 'not_mcp' | 'not_a2a' | 'unreachable';

/**
 * Probes of imported remote entries (modules/federation/entry-probes.ts): the schedule, claimed per entry
 * and interval as webhook_probes is, and what the latest probe found (null before the first).
 */
export interface EntryProbesTable {
  /** remote_entries.id */
  entry_id: string;
  due_at: number;
  /** Probes that did not get an answer in a row (backoff). */
  failures: number;
  status: ObservedStatusColumn | null;
  checked_at: number | null;
  last_answered_at: number | null;
  first_seen_at: number | null;
  tools_count: number | null;
  tools_digest: string | null;
  tools_changed_at: number | null;
  /** JSON text of a mirrored entry's HomeLive (modules/search/home-report-schema.ts), from its latest read. */
  home_live: string | null;
}

/** Each change of an entry's status class or tools digest, logged at `log_seq` (an `entry.observed` event). */
export interface EntryObservationsTable {
  entry_id: string;
  log_seq: number;
  observed_at: number;
  status: ObservedStatusColumn;
  tools_count: number | null;
  tools_digest: string | null;
}

export type EntryProbesPartial = {
  entry_probes: EntryProbesTable;
  entry_observations: EntryObservationsTable;
};
