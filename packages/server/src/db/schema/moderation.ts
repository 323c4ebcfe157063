import type { ModerationReason } from '@agent-registry/protocol';

/** The classes a report or a suspension names (docs/moderation.md): the protocol's, as the log checks them. */
export type ReportReason = ModerationReason;

export type ReportState = 'open' | 'actioned';
export type ModerationAction = 'suspended' | 'restored';

/** An abuse report of an agent or a remote entry by an agent (migration 025). */
export interface ModerationReportsTable {
  /** UUIDv7: ordered by creation, so it is its own page cursor. */
  id: string;
  reporter_did: string;
  /** A DID or a remote entry id. */
  target: string;
  reason: ReportReason;
  details: string | null;
  /** A task of the reporter with the target, as evidence: the report is verified. */
  task_id: string | null;
  verified: number;
  /** open until the target is suspended after it was made. */
  state: ReportState;
  created_at: number;
}

/** An operator's decision (migration 025), numbered by its transparency log entry. */
export interface ModerationDecisionsTable {
  seq: number;
  target: string;
  action: ModerationAction;
  /** A ModerationReason for a suspension, a RestorationReason for a restoration (protocol package). */
  reason: string;
  /** The operator's public note. */
  note: string | null;
  decided_at: number;
}

/** A suspended agent's appeal of its suspension (migration 025): one per decision. */
export interface ModerationAppealsTable {
  decision_seq: number;
  did: string;
  statement: string;
  created_at: number;
}

export type ModerationPartial = {
  moderation_reports: ModerationReportsTable;
  moderation_decisions: ModerationDecisionsTable;
  moderation_appeals: ModerationAppealsTable;
};
