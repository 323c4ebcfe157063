import {
  parseDid,
  webDid,
  checkProfileAgainstLeaf,
  entryBundlePath,
  extendLogInSteps,
  followStateFromStored,
  hashTilePath,
  LogVerificationError,
  storedFollowState,
  verifyLogProof,
  EMPTY_FOLLOW_STATE,
  type LogFollowState,
  type StoredFollowState,
  type CatchUpResult,
  type LogLeaf,
  type LogProof,
  type LogStep,
  PROFILE_LIMITS,
  toBase64,
} from '@agent-registry/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { FederationConfig } from '../../kernel/config.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { provenanceJson, type Provenance } from '../agents/provenance-schemas.js';
import { fetchRemote, RemoteFetchError, type FetchLimits } from './remote-fetch.js';
import { OneAtATime, refreshEach } from './source-rounds.js';
import { httpUrl, limitedCapability, limitedTags, limitedText, MAX_ENDPOINTS } from './listing-limits.js';
import { ConflictError, NotFoundError } from '../../kernel/errors.js';
import {
  entryQuota,
  didWebDomainOf,
  heldEntryIdsOfSource,
  ensureSource,
  putRemoteEntry,
  readSource,
  removeRemoteEntries,
  restampSource,
  updateSource,
  type EntryQuota,
  type RemoteEntryWrite,
} from './remote-entries-store.js';

export interface PeerFollowDeps {
  db: Db;
  clock: Clock;
  policy: WebhookNetworkPolicy;
  config: FederationConfig;
  /** This registry's own did:web domain: a peer never speaks for its agents. */
  didWebDomain: string;
  /** A peer stopped being followed (forked log or mismatching records): log line and metric. */
  onPeerStopped(peer: string, reason: string): void;
}

/** What a peer's source keeps between catch-ups: its key and the verified tree (its compact range). */
interface PeerCursor extends StoredFollowState {
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
type PeerCheckpoint = NonNullable<Provenance['checkpoint']>;

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

export const peerSourceId = (peer: string): string => `peer:${peer}`;
const entryId = (peer: string, did: string): string => `peer:${peer}#${did}`;

/**
 * Follows peer registries of this kind (FEDERATION_PEERS) as the verifying mirror does, with the
 * protocol package's follower (extendLog): each catch-up verifies the signed checkpoint, refuses a
 * shrunk or forked log, checks every entry against the signed root, then reads the profile of each
 * agent the new entries name and checks it against its leaf. The peer's active agents are kept as
 * mirrored entries stamped with the checkpoint they were verified against.
 *
 * A log that forks, or a profile that matches neither its leaf nor a later signed one, stops the
 * follow (state `stopped`), alerts, and marks every entry of the peer `unverified`: kept, never replaced.
 */
export class PeerFollower {
  /** Rounds run one after another: the schedule's and an explicit refresh never write at once. */
  private readonly rounds = new OneAtATime();

  constructor(private readonly deps: PeerFollowDeps) {}

  refreshAll(signal?: AbortSignal): Promise<void> {
    return this.rounds.run(() =>
      refreshEach(
        this.deps.db,
        this.deps.config.peers,
        (peer) => peerSourceId(peer.url),
        (peer, deadline) => this.refresh(peer.url, peer.key, deadline),
        signal,
        this.deps.config.sourceDeadlineMs,
      ),
    );
  }

  /**
   * The operator's deliberate re-trust of a stopped peer (docs/federation.md, "Resuming a stopped
   * peer"): the verified tree and an unpinned key are forgotten, the entries copied under them removed,
   * and the peer is followed again from the start of its current log, its current checkpoint verified
   * with the pinned key or the key it serves now. Who and when stay on the status.
   */
  resume(peer: string, by: string): Promise<void> {
    const configured = this.deps.config.peers.find((candidate) => candidate.url === peer);
    if (configured === undefined)
      throw new NotFoundError(
        'PEER_NOT_FOUND',
        `${JSON.stringify(peer.slice(0, 200))} is not a peer this registry follows (FEDERATION_PEERS lists ${this.deps.config.peers.length === 0 ? 'none' : this.deps.config.peers.map((candidate) => candidate.url).join(', ')})`,
      );
    return this.rounds.run(async () => {
      const { db, clock } = this.deps;
      const id = peerSourceId(peer);
      const source = await readSource(db, id);
      if (source?.state !== 'stopped')
        throw new ConflictError(
          'PEER_NOT_STOPPED',
          `${peer} is being followed (state ${source?.state ?? 'not contacted yet'}): only a stopped peer is resumed`,
        );
      const now = clock.now();
      await removeRemoteEntries(db, await heldEntryIdsOfSource(db, id), now);
      const resumed: PeerResumed = { by, at: now, reason: source.last_error ?? '' };
      await updateSource(db, id, { state: 'ok', last_error: null, cursor: JSON.stringify({ resumed }) });
      await this.refresh(peer, configured.key);
    });
  }

  async refresh(peer: string, pinnedKey: string | undefined, signal?: AbortSignal): Promise<void> {
    const { db, clock } = this.deps;
    const id = peerSourceId(peer);
    await ensureSource(db, { id, kind: 'peer', url: peer });
    const source = await readSource(db, id);
    if (source?.state === 'stopped') return;
    await updateSource(db, id, { last_attempt_at: clock.now() });
    const limits = {
      timeoutMs: this.deps.config.fetchTimeoutMs,
      maxResponseBytes: this.deps.config.maxResponseBytes,
    };
    // The entries verified and stored this round, of the signed checkpoint's size, once a bundle is.
    let progress: { verified: number; of: number } | undefined;
    const stored = source?.cursor == null ? undefined : (JSON.parse(source.cursor) as Partial<PeerCursor>);
    try {
      // A cursor with no key is one an operator's resume left: follow from the start.
      const cursor = stored?.key === undefined ? undefined : (stored as PeerCursor);
      const key =
        pinnedKey ??
        cursor?.key ??
        (await this.text(new URL(`${peer}/log/verifier-key`), limits, signal)).trim();
      if (cursor !== undefined && cursor.key !== key)
        throw new LogVerificationError(`the peer's verifier key is not the one followed so far`);
      checkPeerOrigin(peer, key.split('+')[0] ?? '', 'its verifier key is named');
      const previous: LogFollowState =
        cursor === undefined ? EMPTY_FOLLOW_STATE : followStateFromStored(cursor);
      // Log entries not mirrored since the last resume, carried in the cursor across rounds.
      let refusedSoFar = stored?.refused;
      const cursorOf = (state: LogFollowState, origin: string): string =>
        JSON.stringify({
          key,
          ...storedFollowState(state),
          origin,
          ...(stored?.resumed === undefined ? {} : { resumed: stored.resumed }),
          ...(refusedSoFar === undefined ? {} : { refused: refusedSoFar }),
        } satisfies PeerCursor);
      // Each proved bundle's agents are stored and the cursor moved past it before the next is read:
      // one bundle in memory, and a round cut short (a bound, the deadline, a failure) resumes there.
      const storeStep = async (extension: LogStep): Promise<void> => {
        checkPeerOrigin(peer, extension.origin, 'its checkpoint names the origin');
        const first = extension.state.size - extension.entries.length;
        const checkpoint = {
          origin: extension.origin,
          size: extension.signed.size,
          root_hash: toBase64(extension.signed.root),
        };
        // Each agent once, at its latest entry of this bundle.
        const latest = new Map<string, { leaf: LogLeaf; index: number }>();
        extension.entries.forEach((leaf, offset) => latest.set(leaf.did, { leaf, index: first + offset }));
        const removed: string[] = [];
        const refused: string[] = [];
        for (const [did, { leaf, index }] of latest) {
          // Not this peer's to speak for: never read, never stored; named on its status.
          const notOurs = peerDidRefusal(peer, did, this.deps.didWebDomain);
          if (notOurs !== undefined) {
            refused.push(`entry ${index}: ${notOurs}`);
            continue;
          }
          if (leaf.op === 'deactivate') {
            removed.push(entryId(peer, did));
            continue;
          }
          const profile = await this.profile(
            peer,
            did,
            leaf,
            index,
            key,
            extension.state.size,
            limits,
            signal,
          );
          if (profile === undefined) continue;
          const quota = await this.quota(id);
          const written = await putRemoteEntry(
            db,
            mirroredEntry(peer, did, profile, checkpoint, clock.now()),
            clock.now(),
            quota,
          );
          if (written === 'refused')
            refused.push(
              `entry ${index}: ${did} not mirrored, the peer holds FEDERATION_MAX_ENTRIES_PER_PEER (${quota.max}) entries already`,
            );
        }
        await removeRemoteEntries(db, removed, clock.now(), this.quotas.get(id));
        if (refused.length > 0)
          refusedSoFar = {
            count: (refusedSoFar?.count ?? 0) + refused.length,
            latest: [...refused, ...(refusedSoFar?.latest ?? [])].slice(0, 5),
          };
        await updateSource(db, id, {
          state: 'ok',
          last_error: refusedNote(refusedSoFar),
          last_success_at: clock.now(),
          cursor: cursorOf(extension.state, extension.origin),
        });
        progress = { verified: extension.state.size, of: extension.signed.size };
      };
      const result = await extendLogInSteps(
        {
          checkpoint: () => this.text(new URL(`${peer}/log/checkpoint`), limits, signal),
          entryBundle: async (index, width) =>
            new Uint8Array(
              await this.bytes(new URL(`${peer}/log/${entryBundlePath(index, width)}`), limits, signal),
            ),
          hashTile: async (level, index, width) =>
            new Uint8Array(
              await this.bytes(new URL(`${peer}/log/${hashTilePath(level, index, width)}`), limits, signal),
            ),
        },
        key,
        previous,
        {
          maxEntries: this.deps.config.peerCatchUpEntries,
          maxBytes: this.deps.config.peerCatchUpBytes,
          ...(signal === undefined ? {} : { signal }),
        },
        storeStep,
      );
      this.quotas.delete(id);
      checkPeerOrigin(peer, result.origin, 'its checkpoint names the origin');
      const refusedLine = refusedNote(refusedSoFar);
      await updateSource(
        db,
        id,
        result.state.size === result.checkpointSize
          ? {
              state: 'ok',
              last_error: refusedLine,
              last_success_at: clock.now(),
              cursor: cursorOf(result.state, result.origin),
            }
          : {
              state: progress === undefined ? 'error' : 'ok',
              last_error: [
                catchingUp(result.state.size, result.checkpointSize, cutBy(result, signal, this.deps.config)),
                ...(refusedLine === null ? [] : [refusedLine]),
              ].join('; '),
            },
      );
    } catch (error) {
      this.quotas.delete(id);
      if (error instanceof LogVerificationError) {
        await this.stop(peer, error.message);
        return;
      }
      if (!(error instanceof RemoteFetchError)) throw error;
      // Cut by a deadline, or failed after some bundles: what was stored stays, and the status says how far.
      const verified = progress?.verified ?? followedSize(stored);
      await updateSource(db, id, {
        state: 'error',
        last_error:
          progress !== undefined || (signal?.aborted === true && verified > 0)
            ? catchingUp(verified, progress?.of, error.message)
            : error.message.slice(0, 1000),
      });
    }
  }

  /** This catch-up's quota of the peer's entries, counted at its first new entry. */
  private readonly quotas = new Map<string, EntryQuota>();

  private async quota(sourceId: string): Promise<EntryQuota> {
    let quota = this.quotas.get(sourceId);
    if (quota === undefined) {
      quota = await entryQuota(this.deps.db, sourceId, this.deps.config.maxEntriesPerPeer);
      this.quotas.set(sourceId, quota);
    }
    return quota;
  }

  /**
   * The agent's profile, checked against its leaf; undefined when it changed again after the
   * checkpoint (its own signed proof names a later entry: the next catch-up reads it). Anything else
   * that does not match throws.
   */
  private async profile(
    peer: string,
    did: string,
    leaf: LogLeaf,
    index: number,
    key: string,
    size: number,
    limits: FetchLimits,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    const answer = await fetchRemote(
      this.deps.policy,
      new URL(`${peer}/api/agents/${encodeURIComponent(did)}`),
      {},
      limits,
      signal,
    );
    // Only what the peer states is held against it: a profile it says is not there. A refusal or an
    // outage (429, 5xx, a proxy's answer) is retried next round, never a reason to stop following.
    if (answer.status === 404 || answer.status === 410)
      throw new LogVerificationError(
        `${peer} logged ${did} as active at entry ${index} but its profile answers ${answer.status}`,
      );
    if (answer.status !== 200)
      throw new RemoteFetchError(
        `${peer}'s profile of ${did} answered ${answer.status}; the entries are kept and the next round tries again`,
      );
    const profile = parseObject(answer.body, `${peer}'s profile of ${did}`);
    try {
      checkProfileAgainstLeaf(profile, leaf, index);
      return profile;
    } catch (mismatch) {
      const proofAnswer = await fetchRemote(
        this.deps.policy,
        new URL(`${peer}/api/agents/${encodeURIComponent(did)}/log-proof`),
        {},
        limits,
        signal,
      );
      if (proofAnswer.status !== 200 && proofAnswer.status !== 404 && proofAnswer.status !== 410)
        throw new RemoteFetchError(
          `${peer}'s log proof of ${did} answered ${proofAnswer.status}; the entries are kept and the next round tries again`,
        );
      if (proofAnswer.status === 200) {
        const proof = parseObject(proofAnswer.body, `${peer}'s log proof of ${did}`) as unknown as LogProof;
        const { leaf: later } = verifyLogProof(proof, key, did);
        if (proof.leaf_index >= size && later.profile_sha256 !== leaf.profile_sha256) return undefined;
      }
      throw mismatch;
    }
  }

  /** Stops following: the reason on the status, the alert, and every entry of the peer unverified. */
  private async stop(peer: string, reason: string): Promise<void> {
    const { db, clock } = this.deps;
    await updateSource(db, peerSourceId(peer), {
      state: 'stopped',
      last_error: `no longer followed: ${reason}`.slice(0, 1000),
    });
    await restampSource(
      db,
      peerSourceId(peer),
      (old) => {
        const provenance = JSON.parse(old) as Provenance;
        return provenanceJson({ ...provenance, state: 'unverified', reason: reason.slice(0, 500) });
      },
      clock.now(),
    );
    this.deps.onPeerStopped(peer, reason);
  }

  private async text(url: URL, limits: FetchLimits, signal: AbortSignal | undefined): Promise<string> {
    return (await this.bytes(url, limits, signal)).toString('utf8');
  }

  private async bytes(url: URL, limits: FetchLimits, signal: AbortSignal | undefined): Promise<Buffer> {
    const answer = await fetchRemote(this.deps.policy, url, {}, limits, signal);
    if (answer.status !== 200) throw new RemoteFetchError(`${url.href} answered ${answer.status}`);
    return answer.body;
  }
}

/** A peer's status while its log is followed over several rounds: how far, and why this round stopped. */
function catchingUp(verified: number, of: number | undefined, why: string): string {
  const how = of === undefined ? `${verified} entries` : `${verified} of ${of} entries`;
  return `catching up: ${how} of the peer's log verified and stored; this round stopped: ${why}; the next round resumes from entry ${verified}`.slice(
    0,
    1000,
  );
}

/** How many entries of a peer's log its stored cursor says were verified (0 before the first). */
const followedSize = (stored: Partial<PeerCursor> | undefined): number =>
  stored?.key !== undefined && typeof stored.size === 'number' ? stored.size : 0;

/** Which bound ended a stepwise catch-up before the checkpoint, named with its setting. */
function cutBy(result: CatchUpResult, signal: AbortSignal | undefined, config: FederationConfig): string {
  if (result.stoppedBy === 'entries')
    return `FEDERATION_PEER_CATCHUP_ENTRIES (${config.peerCatchUpEntries} entries a round)`;
  if (result.stoppedBy === 'bytes')
    return `FEDERATION_PEER_CATCHUP_MB (${config.peerCatchUpBytes / 1024 / 1024} MiB of entry bundles a round)`;
  return signal?.reason instanceof Error ? signal.reason.message : 'the round ended';
}

/**
 * The entry a peer's verified profile becomes. A log proves only that the peer published it, not that
 * it is safe to hand on: the listed fields go through the same limits as imported entries, and only
 * http(s) endpoints at the peer's own origin are kept (the profile's `a2a_agent_card` is named `a2a`,
 * as imports name theirs).
 */
export function mirroredEntry(
  peer: string,
  did: string,
  profile: Record<string, unknown>,
  checkpoint: PeerCheckpoint,
  now: number,
): RemoteEntryWrite {
  const endpoints = Array.isArray(profile.endpoints)
    ? (profile.endpoints as unknown[]).flatMap((raw) => {
        const endpoint = raw as { type?: unknown; url?: unknown } | null;
        const type = limitedText(endpoint?.type, PROFILE_LIMITS.capabilityTypeMaxLength);
        const url = httpUrl(endpoint?.url);
        // A referral names only the peer itself: an agent of a registry of this kind is reached there.
        return type === undefined || url === undefined || new URL(url).origin !== peer
          ? []
          : [{ type: type === 'a2a_agent_card' ? 'a2a' : type, url }];
      })
    : [];
  const capabilities = Array.isArray(profile.capabilities)
    ? (profile.capabilities as unknown[])
        .flatMap((raw) => {
          const capability = raw as { type?: unknown; description?: unknown; tags?: unknown } | null;
          return limitedCapability(capability?.type, capability?.description, capability?.tags) ?? [];
        })
        .slice(0, PROFILE_LIMITS.capabilitiesMaxCount)
    : [];
  return {
    id: entryId(peer, did),
    source_id: peerSourceId(peer),
    kind: 'mirrored',
    did,
    name: limitedText(profile.name, PROFILE_LIMITS.nameMaxLength) ?? did,
    description: limitedText(profile.description, PROFILE_LIMITS.descriptionMaxLength, true) ?? null,
    capabilities: JSON.stringify(capabilities),
    tags: JSON.stringify(limitedTags(profile.tags)),
    endpoints: JSON.stringify(endpoints.slice(0, MAX_ENDPOINTS)),
    home_registry: peer,
    provenance: provenanceJson({
      kind: 'mirrored',
      home_registry: peer,
      checkpoint,
      state: 'verified',
      verified_at: now,
    }),
  };
}

/**
 * Why a peer may not speak for `did`, or undefined if it may: only a registry did:web of the peer's
 * own host (as did:web encodes it, port included), in its canonical form, and never one of this
 * registry's own (a peer configured at this registry's host is refused likewise).
 */
export function peerDidRefusal(peer: string, did: string, ownDidWebDomain: string): string | undefined {
  const domain = didWebDomainOf(peer) ?? '';
  const expected = `a did:web of ${domain} (did:web:${domain}:agent:<id>)`;
  let agentId: string;
  try {
    const parsed = parseDid(did, ownDidWebDomain);
    if (parsed.method !== 'web') return `${did.slice(0, 200)} is not ${expected}`;
    if (parsed.isLocal) return `${did.slice(0, 200)} is an agent of this registry, not of the peer`;
    agentId = parsed.agentId;
  } catch {
    return `${JSON.stringify(did.slice(0, 200))} is not ${expected}`;
  }
  if (did !== webDid(domain, agentId)) return `${did.slice(0, 200)} is not ${expected}`;
  if (domain.toLowerCase() === ownDidWebDomain.toLowerCase())
    return `${did.slice(0, 200)} is an agent of this registry, not of the peer`;
  return undefined;
}

/**
 * The origin a peer's log must carry, as a registry of this kind forms it: its public URL without the
 * scheme, then `/log` (C2SP tlog-checkpoint: a schema-less URL naming the log). A key or checkpoint
 * naming another log is another log's, and the peer is not followed.
 */
function checkPeerOrigin(peer: string, origin: string, what: string): void {
  const expected = `${new URL(peer).host}/log`;
  if (origin !== expected)
    throw new LogVerificationError(
      `${what} ${JSON.stringify(origin.slice(0, 200))}, but the log of ${peer} is ${expected}`,
    );
}

/**
 * The status note of a peer some of whose log entries were not mirrored (since it was last resumed):
 * how many, and the latest few named with the reason.
 */
function refusedNote(refused: PeerCursor['refused']): string | null {
  if (refused === undefined) return null;
  const more =
    refused.count > refused.latest.length ? `; and ${refused.count - refused.latest.length} earlier` : '';
  return `${refused.count} log entries refused (the rest of each catch-up applied), latest first: ${refused.latest.join('; ')}${more}`.slice(
    0,
    1000,
  );
}

function parseObject(body: Buffer, what: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new RemoteFetchError(`${what} is not a JSON object`);
}
