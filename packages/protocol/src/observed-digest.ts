import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { canonicalJson } from './canonical-json.js';

/**
 * The digest of a list of named definitions, so that anyone holding the list can recompute it:
 * `"sha256:" + hex(SHA-256(RFC 8785 canonical JSON of the array))`, the array being every object as
 * given, sorted by `key` (UTF-16 code units, the order RFC 8785 sorts member names in; two objects with
 * the same name keep the order of their own canonical JSON, so the digest never depends on list order).
 */
export function namedListDigest(items: readonly unknown[], key: string): string {
  const keyed = items.map((item) => ({
    name: nameOf(item, key),
    json: canonicalJson(item),
  }));
  keyed.sort((a, b) => compare(a.name, b.name) || compare(a.json, b.json));
  const text = `[${keyed.map((item) => item.json).join(',')}]`;
  return `sha256:${bytesToHex(sha256(new TextEncoder().encode(text)))}`;
}

/**
 * An MCP server's `tools_digest`: every tool object `tools/list` returned (all pages), as returned,
 * sorted by `name`.
 */
export function toolsDigest(tools: readonly unknown[]): string {
  return namedListDigest(tools, 'name');
}

/**
 * A registered agent's `capabilities_digest`: its `capabilities` array as the registry serves it in the
 * profile, sorted by `type`: the same rule as `toolsDigest`, so local and imported agents pin alike.
 */
export function capabilitiesDigest(capabilities: readonly unknown[]): string {
  return namedListDigest(capabilities, 'type');
}

function nameOf(item: unknown, key: string): string {
  if (item === null || typeof item !== 'object') return '';
  const value = (item as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : '';
}

/** Code-unit order, as RFC 8785 orders member names. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
