import {
  checkProfileAgainstLeaf,
  isProfileLeaf,
  entryBundlePath,
  extendLogInSteps,
  followStateFromStored,
  hashTilePath,
  LogVerificationError,
  storedFollowState,
  verifyLogProof,
  EMPTY_FOLLOW_STATE,
  type LogFollowState,
  type LogLeaf,
  type LogProof,
  type LogStep,
  toBase64,
} from '@agent-registry/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { FederationConfig } from '../../kernel/config.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { provenanceJson, type Provenance } from '../agents/provenance-schemas.js';
import { fetchRemote, RemoteFetchError, type FetchLimits } from './remote-fetch.js';
import { checkPeerOrigin, parseObject } from './peer-answers.js';
import { OneAtATime, refreshEach } from './source-rounds.js';
import { entryId, mirroredEntry, peerDidRefusal, peerSourceId } from './peer-entries.js';
import {
  catchingUp,
  cutBy,
  followedSize,
  refusedNote,
  type PeerCursor,
  type PeerResumed,
} from './peer-status.js';
import { ConflictError, NotFoundError } from '../../kernel/errors.js';
import {
  entryQuota,
  heldEntryIdsOfSource,
  putRemoteEntry,
  removeRemoteEntries,
  restampSource,
  type EntryQuota,
} from './remote-entries-store.js';
import { ensureSource, readSource, updateSource } from './remote-sources-store.js';

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
        // Event leaves log no profile; what a peer does with a kind it knows is its handler's (none yet). A
        // key rotation needs none: it stamps the agent, so the profile leaf before its key.rotated is re-read.
        // Nor does a moderation decision: a suspension's profile leaf is a "deactivate" (the entry goes) and
        // a restoration's an "update" (the profile is read again and checked).
        extension.entries.forEach((leaf, offset) => {
          if (isProfileLeaf(leaf)) latest.set(leaf.did, { leaf, index: first + offset });
        });
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
          // A profile logged while its agent is not active (a suspended agent's reputation change): not listed.
          if (profile.status !== 'active') {
            removed.push(entryId(peer, did));
            continue;
          }
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
