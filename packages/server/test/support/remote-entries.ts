import type { RemoteEntryWrite } from '../../src/modules/federation/remote-entries-store.js';
import { provenanceJson } from '../../src/modules/agents/provenance-schemas.js';

/** The peer registry the tests' mirrored entries come from. */
export const PEER = 'https://peer.example';

/** An agent of PEER as the peer follower stores it: mirrored, verified against the peer's log. */
export function mirroredEntry(
  did: string,
  profile: { name: string; description: string; capability: string; tag: string },
): RemoteEntryWrite {
  return {
    id: `peer:${PEER}#${did}`,
    source_id: `peer:${PEER}`,
    kind: 'mirrored',
    did,
    name: profile.name,
    description: profile.description,
    capabilities: JSON.stringify([{ type: profile.capability }]),
    tags: JSON.stringify([profile.tag]),
    endpoints: JSON.stringify([{ type: 'invoke', url: `${PEER}/api/invoke` }]),
    home_registry: PEER,
    provenance: provenanceJson({
      kind: 'mirrored',
      home_registry: PEER,
      checkpoint: { origin: 'peer.example/log', size: 12, root_hash: 'cm9vdA==' },
      state: 'verified',
      verified_at: 1_764_000_000_000,
    }),
  };
}
