import assert from 'node:assert/strict';
import type { TestRegistry } from '@agent-registry/testkit/in-process';
import { putRemoteEntry, type RemoteEntryWrite } from '../../src/modules/federation/remote-entries-store.js';
import { mirroredEntry as peerMirroredEntry } from '../../src/modules/federation/peer-entries.js';
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
    home_report: JSON.stringify({
      reported_by: PEER,
      reputation_score: 61.5,
      average_rating: 8.5,
      total_reviews: 4,
      read_at: 1_764_000_000_000,
    }),
    provenance: provenanceJson({
      kind: 'mirrored',
      home_registry: PEER,
      checkpoint: { origin: 'peer.example/log', size: 12, root_hash: 'cm9vdA==' },
      state: 'verified',
      verified_at: 1_764_000_000_000,
    }),
  };
}

/** What GET /api/federation/entries/{id} answers for a mirrored entry, as the tests read it. */
export interface MirroredEntryAnswer {
  name: string;
  description: string;
  tags: string[];
  capabilities: { type: string; description?: string; tags?: string[]; input_schema?: unknown }[];
  endpoints: { type: string; url: string }[];
}

/**
 * Stores `profile` as the peer follower would mirror it from `peerUrl` (through the follower's own
 * cleaning, mirroredEntry), then reads the entry back over HTTP.
 */
export async function mirrorAndRead(
  registry: TestRegistry,
  peerUrl: string,
  did: string,
  profile: Record<string, unknown>,
  origin: string,
): Promise<MirroredEntryAnswer> {
  const checkpoint = { origin, size: 1, root_hash: 'AA' };
  await putRemoteEntry(
    registry.ctx.database.db,
    peerMirroredEntry(peerUrl, did, profile, checkpoint, Date.now()),
    Date.now(),
  );
  const response = await registry.app.inject({
    method: 'GET',
    url: `/api/federation/entries/${encodeURIComponent(`peer:${peerUrl}#${did}`)}`,
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<MirroredEntryAnswer>();
}
