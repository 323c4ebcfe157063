/**
 * The rules every remote entry's listed fields go through, whatever it came from (an A2A card, an MCP
 * Registry's server, a peer's mirrored profile): text trimmed and cut to the profile limits, counts cut,
 * endpoints only absolute http(s) URLs. A remote entry is never larger than a registered one, and no
 * client of the API, ARD or MCP faces is handed a `javascript:` or other non-web URL.
 */
import { PROFILE_LIMITS } from '@agent-registry/protocol';
import type { Capability } from '@agent-registry/protocol';

/** The most endpoints a remote entry lists. */
export const MAX_ENDPOINTS = 10;

/** A non-empty string, trimmed and cut to `max` characters; anything else is undefined. */
export const limitedText = (value: unknown, max: number): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : undefined;

/** Tags as a profile may hold them: strings only, each cut, at most tagsMaxCount. */
export const limitedTags = (value: unknown): string[] =>
  Array.isArray(value)
    ? value
        .flatMap((tag) => limitedText(tag, PROFILE_LIMITS.tagMaxLength) ?? [])
        .slice(0, PROFILE_LIMITS.tagsMaxCount)
    : [];

/** A capability cut to the profile limits (type, description, tags), or undefined without a type. */
export function limitedCapability(
  type: unknown,
  description: unknown,
  tags: unknown,
): Capability | undefined {
  const kind = limitedText(type, PROFILE_LIMITS.capabilityTypeMaxLength);
  if (kind === undefined) return undefined;
  const text = limitedText(description, PROFILE_LIMITS.capabilityDescriptionMaxLength);
  const kept = limitedTags(tags);
  return {
    type: kind,
    ...(text === undefined ? {} : { description: text }),
    ...(kept.length === 0 ? {} : { tags: kept }),
  };
}

/** An absolute http(s) URL within the profile's URL limit, normalised; anything else is undefined. */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > PROFILE_LIMITS.urlMaxLength) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
