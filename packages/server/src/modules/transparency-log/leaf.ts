import { createHash } from 'node:crypto';
import { canonicalJson, loggedProfile } from '@agent-registry/protocol';
import type { AgentProfileRow } from '../agents/agents-store.js';
import { toPublishedProfile } from '../agents/agent-view.js';
import type { LoggedOperation } from '../agents/change-feed-store.js';
import { isEventRecord, type LogEventValue } from '../agents/log-event-store.js';

/** What a leaf says the change was; a deactivation is logged as an update to status "deactivated". */
export type LeafOperation = LoggedOperation | 'deactivate';

/** A leaf's data, before canonicalisation (docs/transparency-log.md, "Leaf format"). */
export interface LeafRecord {
  v: 1;
  seq: number;
  did: string;
  op: LeafOperation;
  /** The profile's updated_at (milliseconds) as the change left it. */
  time: number;
  /** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of the profile without service_record and availability. */
  profile_sha256: string;
}

/** The stored log record (log_records) as one leaf's bytes: RFC 8785 canonical JSON in UTF-8. */
export function leafData(seq: number, operation: string, recordJson: string, publicUrl: string): Buffer {
  if (isEventRecord(operation)) {
    // An event record holds its leaf's fields already (agents/log-event-store.ts); the leaf adds v, seq, op.
    const fields = JSON.parse(recordJson) as Record<string, LogEventValue>;
    return Buffer.from(canonicalJson({ ...fields, v: 1, seq, op: operation }), 'utf8');
  }
  const parsed = JSON.parse(recordJson) as AgentProfileRow;
  const row: AgentProfileRow = {
    ...parsed,
    invocation_enabled: Number(parsed.invocation_enabled),
    created_at: Number(parsed.created_at),
    updated_at: Number(parsed.updated_at),
  };
  const profile = toPublishedProfile(row, publicUrl);
  const op: LeafOperation =
    operation === 'update' && row.status !== 'active' ? 'deactivate' : (operation as LoggedOperation);
  const leaf: LeafRecord = {
    v: 1,
    seq,
    did: row.did,
    op,
    time: row.updated_at,
    profile_sha256: profileSha256(profile),
  };
  return Buffer.from(canonicalJson(leaf), 'utf8');
}

/**
 * The profile's digest as a leaf names it (the protocol package's profileSha256, which states the rule);
 * hashed here with node:crypto, the faster of the two on the write path.
 */
export function profileSha256(profile: object): string {
  return createHash('sha256')
    .update(canonicalJson(loggedProfile(profile)), 'utf8')
    .digest('hex');
}
