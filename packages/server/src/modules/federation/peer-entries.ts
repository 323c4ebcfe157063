import { parseDid, webDid, PROFILE_LIMITS } from '@agent-registry/protocol';
import { provenanceJson } from '../agents/provenance-schemas.js';
import { homeReportOf } from '../search/home-report-schema.js';
import { httpUrl, limitedCapability, limitedTags, limitedText, MAX_ENDPOINTS } from './listing-limits.js';
import { didWebDomainOf, type RemoteEntryWrite } from './remote-entries-store.js';
import type { PeerCheckpoint } from './peer-status.js';

export const peerSourceId = (peer: string): string => `peer:${peer}`;
export const entryId = (peer: string, did: string): string => `peer:${peer}#${did}`;

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
  const report = homeReportOf(peer, profile, now);
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
    home_report: report === null ? null : JSON.stringify(report),
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
