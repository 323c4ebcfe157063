import { capabilitiesDigest } from '@agent-registry/protocol';

/** Distinct capability lists whose digests are kept: agents' lists repeat, and a search must not hash them every time. */
const CACHE_ENTRIES = 10_000;
const cache = new Map<string, string>();

/**
 * The `capabilities_digest` of an agent registered here, from its capabilities as stored (the JSON text
 * the search result and the profile show, parsed): the protocol package's capabilitiesDigest.
 */
export function capabilitiesDigestOf(capabilitiesJson: string): string {
  let digest = cache.get(capabilitiesJson);
  if (digest === undefined) {
    digest = capabilitiesDigest(JSON.parse(capabilitiesJson) as unknown[]);
    // Dropped whole when full: simpler than an LRU, and a refill costs one hash per list.
    if (cache.size >= CACHE_ENTRIES) cache.clear();
    cache.set(capabilitiesJson, digest);
  }
  return digest;
}
