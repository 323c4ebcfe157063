import {
  extendLog,
  entryBundlePath,
  checkProfileAgainstLeaf,
  toBase64,
  verifyLogProof,
  type LogFollowState,
  type LogLeaf,
  type LogProof,
} from '@agent-registry/protocol';
import type { AgentProfile } from '../types.js';
import { enc, type Transport } from './transport.js';

export type { LogFollowState, LogLeaf, LogProof } from '@agent-registry/protocol';

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

export interface LogCatchUp {
  state: LogFollowState;
  /** The leaves added since the previous state, in log order. */
  entries: LogLeaf[];
  checkpoint: string;
}

/**
 * One catch-up of a verifying log follower over HTTP (the verification itself is the protocol
 * package's extendLog). Throws LogVerificationError naming what was wrong.
 */
export async function followLog(
  transport: Transport,
  getBytes: (path: string) => Promise<Uint8Array>,
  verifierKey: string,
  previous?: LogFollowState,
): Promise<LogCatchUp> {
  const { state, entries, checkpoint } = await extendLog(
    {
      checkpoint: () => transport.request<string>('GET', '/log/checkpoint', { text: true }),
      entryBundle: (index, width) => getBytes(`/log/${entryBundlePath(index, width)}`),
    },
    verifierKey,
    previous,
  );
  return { state, entries, checkpoint };
}
