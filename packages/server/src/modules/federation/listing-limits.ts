/**
 * The rules every remote entry's listed fields go through, whatever it came from (an A2A card, an MCP
 * Registry's server, a peer's mirrored profile): text cleaned of control characters and made
 * well-formed (importedText), trimmed and cut to the profile limits, counts cut, endpoints only
 * absolute http(s) URLs. A remote entry is never larger than a registered one, stores the same on
 * SQLite and PostgreSQL, and no client of the API, ARD or MCP faces is handed a `javascript:` or other
 * non-web URL.
 */
import { PROFILE_LIMITS } from '@agent-registry/protocol';
import type { Capability } from '@agent-registry/protocol';

/** The most endpoints a remote entry lists. */
export const MAX_ENDPOINTS = 10;

const LINE_BREAKS_AND_TABS = /[\t\n\r]/g;
// C0 (U+0000 included), DEL and C1: what is left of \p{Cc} once tab, LF and CR are dealt with.
// eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
const OTHER_CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
// With the u flag a lone surrogate is one code point of category Cs; paired ones form a character.
const LONE_SURROGATES = /\p{Cs}/gu;

/**
 * Imported text as the registry stores it, on either database: control characters removed (U+0000,
 * which PostgreSQL text cannot hold, with the rest of C0, DEL and C1), tab, LF and CR kept in text that
 * may run over lines (`multiline`) and each made a space elsewhere, and a lone surrogate (not Unicode,
 * refused by PostgreSQL and stored differently by SQLite) replaced by U+FFFD. Cleaned, not refused: a
 * listing is not lost over an invisible character, as it is not over a field longer than the limit.
 */
export function importedText(text: string, multiline = false): string {
  const kept = multiline ? text : text.replace(LINE_BREAKS_AND_TABS, ' ');
  return kept.replace(OTHER_CONTROLS, '').replace(LONE_SURROGATES, '\uFFFD');
}

/**
 * Whether text may name something (an entry's id part, a version in a URL) as given: no control
 * character and no lone surrogate. Names are not cleaned: two names that differ only there would
 * become one entry.
 */
export const isStorableName = (text: string): boolean => !/\p{Cc}/u.test(text) && !/\p{Cs}/u.test(text);

/** The first `max` UTF-16 units, less a high surrogate the cut left without its pair. */
function cut(text: string, max: number): string {
  const head = text.slice(0, max);
  return /[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head;
}

/**
 * A non-empty string, cleaned (importedText), trimmed and cut to `max` characters; anything else is
 * undefined. `multiline` for descriptions, which keep their line breaks.
 */
export function limitedText(value: unknown, max: number, multiline = false): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = importedText(value, multiline).trim();
  return text === '' ? undefined : cut(text, max);
}

/** A description: limitedText keeping tabs and line breaks. */
export const limitedDescription = (value: unknown, max: number): string | undefined =>
  limitedText(value, max, true);

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
  const text = limitedDescription(description, PROFILE_LIMITS.capabilityDescriptionMaxLength);
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
