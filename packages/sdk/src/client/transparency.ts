import {
  extendLog,
  entryBundlePath,
  checkProfileAgainstLeaf,
  isProfileLeaf,
  LogVerificationError,
  profileSha256,
  toBase64,
  verifyLogProof,
  type AnyLogLeaf,
  type LogFollowState,
  type LogLeaf,
  type LogProof,
} from '@agent-registry/protocol';
import { RegistryError } from '../errors.js';
import type { AgentProfile } from '../types.js';
import { enc, type Transport } from './transport.js';

export type { AnyLogLeaf, LogEventLeaf, LogFollowState, LogLeaf, LogProof } from '@agent-registry/protocol';

export interface VerifiedAgent {
  did: string;
  /** The leaf's position in the log. */
  leafIndex: number;
  treeSize: number;
  origin: string;
  /** The base64 root hash of the checkpoint the leaf was proven against. */
  rootHash: string;
  leaf: LogLeaf;
  profile: AgentProfile;
  checkpoint: string;
}

/**
 * Checks that the profile the registry serves for `did` is the latest one its transparency log holds:
 * the checkpoint's signature, the inclusion proof, and the profile's digest against the leaf.
 */
export async function verifyAgent(
  transport: Transport,
  did: string,
  verifierKey?: string,
): Promise<VerifiedAgent> {
  const [proof, profile, key] = await Promise.all([
    transport.request<LogProof>('GET', `/api/agents/${enc(did)}/log-proof`),
    transport.request<AgentProfile>('GET', `/api/agents/${enc(did)}`),
    verifierKey ?? transport.request<string>('GET', '/log/verifier-key', { text: true }),
  ]);
  const { checkpoint, leaf } = verifyLogProof(proof, key, did);
  checkProfileAgainstLeaf(profile, leaf, proof.leaf_index);
  return {
    did,
    leafIndex: proof.leaf_index,
    treeSize: proof.tree_size,
    origin: checkpoint.origin,
    rootHash: toBase64(checkpoint.root),
    leaf,
    profile,
    checkpoint: proof.checkpoint,
  };
}

/** The profile the registry serves for an agent the catch-up's entries name, checked against its leaf. */
export interface FollowedProfile {
  did: string;
  /** The agent's latest leaf in the verified tree, and its sequence number. */
  leafIndex: number;
  seq: number;
  /**
   * The served profile, whose digest is the leaf's; null when the registry already serves a later
   * change of the agent, proven by its own signed inclusion proof (the next catch-up brings its leaf).
   */
  profile: AgentProfile | null;
}

export interface LogCatchUp {
  state: LogFollowState;
  /** The leaves added since the previous state, in log order: profile changes and events. */
  entries: AnyLogLeaf[];
  /** Their data as logged: the bytes each leaf hash is over. */
  entryData: Uint8Array[];
  /** One per agent the new entries name (empty with `profiles: false`). */
  profiles: FollowedProfile[];
  checkpoint: string;
}

export interface FollowLogOptions {
  verifierKey: string;
  state?: LogFollowState;
  /** Fetch and check each named agent's served profile against its latest leaf (default true). */
  profiles?: boolean;
  /** How many profiles are fetched at once (default 8). */
  concurrency?: number;
}

/**
 * One catch-up of a verifying log follower over HTTP (the verification itself is the protocol
 * package's extendLog), then the served profile of each agent the new entries name, compared with
 * the agent's latest leaf. Throws LogVerificationError naming what was wrong.
 */
export async function followLog(
  transport: Transport,
  getBytes: (path: string) => Promise<Uint8Array>,
  options: FollowLogOptions,
): Promise<LogCatchUp> {
  const { state, entries, entryData, checkpoint } = await extendLog(
    {
      checkpoint: () => transport.request<string>('GET', '/log/checkpoint', { text: true }),
      entryBundle: (index, width) => getBytes(`/log/${entryBundlePath(index, width)}`),
    },
    options.verifierKey,
    options.state,
  );
  const first = state.size - entries.length;
  const latest = new Map<string, { leaf: LogLeaf; index: number }>();
  // Event leaves (docs/transparency-log.md) log no profile: their place in the tree is what was verified.
  entries.forEach((leaf, i) => {
    if (isProfileLeaf(leaf)) latest.set(leaf.did, { leaf, index: first + i });
  });
  const profiles: FollowedProfile[] = [];
  if (options.profiles !== false) {
    const queue = [...latest.values()];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        profiles.push(
          await servedProfile(transport, getBytes, next.leaf, next.index, options.verifierKey, state),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
    profiles.sort((a, b) => a.leafIndex - b.leafIndex);
  }
  return { state, entries, entryData, profiles, checkpoint };
}

async function servedProfile(
  transport: Transport,
  getBytes: (path: string) => Promise<Uint8Array>,
  leaf: LogLeaf,
  index: number,
  verifierKey: string,
  verified: LogFollowState,
): Promise<FollowedProfile> {
  const did = leaf.did;
  let profile: AgentProfile;
  try {
    profile = await transport.request<AgentProfile>('GET', `/api/agents/${enc(did)}`);
  } catch (error) {
    if (error instanceof RegistryError && error.status === 404) {
      throw new LogVerificationError(
        `the registry serves no profile for ${did}, logged at position ${index}, sequence ${leaf.seq}: a logged agent was dropped`,
      );
    }
    throw error;
  }
  if (profileSha256(profile) === leaf.profile_sha256)
    return { did, leafIndex: index, seq: leaf.seq, profile };
  // The agent may have changed since the checkpoint was read: that is no mismatch if the served profile
  // is itself logged later, which its own proof (signed, included, of this agent, with this digest) shows.
  const proof = await transport.request<LogProof>('GET', `/api/agents/${enc(did)}/log-proof`);
  const newer = verifyLogProof(proof, verifierKey, did);
  // Later means after the tree just verified (within it, this leaf is the agent's latest).
  if (proof.leaf_index < verified.size || newer.leaf.seq <= leaf.seq)
    checkProfileAgainstLeaf(profile, leaf, index);
  checkProfileAgainstLeaf(profile, newer.leaf, proof.leaf_index);
  // And of a tree that extends the verified one, not of a fork: its checkpoint is followed from it.
  await extendLog(
    {
      checkpoint: async () => proof.checkpoint,
      entryBundle: (bundle, width) => getBytes(`/log/${entryBundlePath(bundle, width)}`),
    },
    verifierKey,
    verified,
  );
  return { did, leafIndex: index, seq: leaf.seq, profile: null };
}
