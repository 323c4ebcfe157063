import { putRemoteEntry } from '../../src/modules/federation/remote-entries-store.js';
import { ensureSource } from '../../src/modules/federation/remote-sources-store.js';
import type { ListeningRegistry } from './faces-helpers.js';
import { mirroredEntry, PEER } from './remote-entries.js';

/** What the ARD face answers, as the tests read it. */
export interface Entry {
  identifier: string;
  displayName: string;
  type: string;
  url: string;
  description: string;
  tags: string[];
  capabilities: string[];
  representativeQueries: string[];
  updatedAt: string;
  publisher: string;
  metadata: Record<string, unknown>;
  trustManifest: {
    identity: string;
    identityType: string;
    attestations: { type: string; uri: string }[];
    provenance: { relation: string; sourceId: string }[];
  };
}
export interface Result extends Entry {
  score: number;
  source: string;
}
export interface SearchAnswer {
  results: Result[];
  referrals?: unknown[];
  pageToken?: string;
}
export interface ErrorAnswer {
  errorCode: string;
  message: string;
}

/** Agents of a peer registry, mirrored here: a federated search finds them, ARD never publishes them. */
export const REMOTE_DIDS = ['did:web:peer.example:agent:0a', 'did:web:peer.example:agent:0b'];

export async function putRemoteWeatherAgents(registry: ListeningRegistry): Promise<void> {
  const db = registry.ctx.database.db;
  await ensureSource(db, { id: `peer:${PEER}`, kind: 'peer', url: PEER });
  for (const did of REMOTE_DIDS) {
    const profile = {
      name: `Peer Weather ${did.slice(-2)}`,
      description: 'Weather along shipping routes',
      capability: 'weather',
      tag: 'weather',
    };
    await putRemoteEntry(db, mirroredEntry(did, profile), 1_764_000_000_000);
  }
}
