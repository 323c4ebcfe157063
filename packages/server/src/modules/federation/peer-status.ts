import type { CatchUpResult, StoredFollowState } from '@agent-registry/protocol';
import type { FederationConfig } from '../../kernel/config.js';
import type { Provenance } from '../agents/provenance-schemas.js';

/** What a peer's source keeps between catch-ups: its key and the verified tree (its compact range). */
export interface PeerCursor extends StoredFollowState {
  /** The note verifier key: pinned in FEDERATION_PEERS, or taken on first contact. */
  key: string;
  origin?: string;
  /** The last time an operator resumed the peer after a stop (kept across catch-ups). */
  resumed?: PeerResumed;
  /** Log entries not mirrored since the last resume: how many, and the latest few with the reason. */
  refused?: { count: number; latest: string[] };
}

export interface PeerResumed {
  by: string;
  at: number;
  reason: string;
}

/** The last checkpoint verified of a peer, as its status shows it (as a mirrored entry names it). */
export type PeerCheckpoint = NonNullable<Provenance['checkpoint']>;

/**
 * What a peer's status shows of its source's cursor: the last checkpoint verified (none before the
 * first verified catch-up, or after a resume), and who resumed it after a stop and when (if ever).
 */
export function peerCursorStatus(cursor: string | null): {
  checkpoint?: PeerCheckpoint;
  resumed?: PeerResumed;
} {
  if (cursor === null) return {};
  const stored = JSON.parse(cursor) as Partial<PeerCursor>;
  return {
    ...(stored.key !== undefined && stored.size !== undefined && stored.root !== undefined
      ? { checkpoint: { origin: stored.origin ?? '', size: stored.size, root_hash: stored.root } }
      : {}),
    ...(stored.resumed === undefined ? {} : { resumed: stored.resumed }),
  };
}

/** A peer's status while its log is followed over several rounds: how far, and why this round stopped. */
export function catchingUp(verified: number, of: number | undefined, why: string): string {
  const how = of === undefined ? `${verified} entries` : `${verified} of ${of} entries`;
  return `catching up: ${how} of the peer's log verified and stored; this round stopped: ${why}; the next round resumes from entry ${verified}`.slice(
    0,
    1000,
  );
}

/** How many entries of a peer's log its stored cursor says were verified (0 before the first). */
export const followedSize = (stored: Partial<PeerCursor> | undefined): number =>
  stored?.key !== undefined && typeof stored.size === 'number' ? stored.size : 0;

/** Which bound ended a stepwise catch-up before the checkpoint, named with its setting. */
export function cutBy(
  result: CatchUpResult,
  signal: AbortSignal | undefined,
  config: FederationConfig,
): string {
  if (result.stoppedBy === 'entries')
    return `FEDERATION_PEER_CATCHUP_ENTRIES (${config.peerCatchUpEntries} entries a round)`;
  if (result.stoppedBy === 'bytes')
    return `FEDERATION_PEER_CATCHUP_MB (${config.peerCatchUpBytes / 1024 / 1024} MiB of entry bundles a round)`;
  return signal?.reason instanceof Error ? signal.reason.message : 'the round ended';
}

/**
 * The status note of a peer some of whose log entries were not mirrored (since it was last resumed):
 * how many, and the latest few named with the reason.
 */
export function refusedNote(refused: PeerCursor['refused']): string | null {
  if (refused === undefined) return null;
  const more =
    refused.count > refused.latest.length ? `; and ${refused.count - refused.latest.length} earlier` : '';
  return `${refused.count} log entries refused (the rest of each catch-up applied), latest first: ${refused.latest.join('; ')}${more}`.slice(
    0,
    1000,
  );
}
