import { BadRequestError } from '../../kernel/errors.js';
import type { Capability } from '@agent-registry/protocol';
import { LIMITS } from '../../kernel/limits.js';
import { assertDisplayName, assertNoBidiControls } from '../../kernel/text-rules.js';

/** A valid absolute http(s) URL of at most 2048 characters, or a 400 naming the field. */
export function assertHttpUrl(field: string, value: string): void {
  if (value.length > LIMITS.urlMaxLength) {
    throw new BadRequestError('INVALID_URL', `${field} must be at most ${LIMITS.urlMaxLength} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequestError('INVALID_URL', `${field} must be an absolute http:// or https:// URL`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new BadRequestError('INVALID_URL', `${field} must be an absolute http:// or https:// URL`);
  }
}

/**
 * Rules the request schema cannot state: a visible name without bidi controls, capability types and
 * tags that cannot reorder text, valid URLs. Capability schemas are CapabilitySchemas' job.
 */
export function assertProfileRules(
  profile: {
    name?: string | null;
    avatar?: string | null;
    website?: string | null;
    capabilities?: readonly Capability[] | null;
    tags?: readonly string[] | null;
  },
  prefix = 'profile.',
): void {
  if (profile.name != null) assertDisplayName(`${prefix}name`, profile.name);
  profile.tags?.forEach((tag, index) => assertNoBidiControls(`${prefix}tags[${index}]`, tag));
  profile.capabilities?.forEach((capability, index) => {
    const where = `${prefix}capabilities[${index}]`;
    assertNoBidiControls(`${where}.type`, capability.type);
    capability.tags?.forEach((tag, tagIndex) => assertNoBidiControls(`${where}.tags[${tagIndex}]`, tag));
  });
  if (profile.avatar) assertHttpUrl(`${prefix}avatar`, profile.avatar);
  if (profile.website) assertHttpUrl(`${prefix}website`, profile.website);
}

/** A profile's columns as the agents row stores them (capabilities and tags as JSON text). */
export interface StoredProfileText {
  name: string;
  description?: string | null;
  avatar?: string | null;
  website?: string | null;
  capabilities: string;
  tags?: string | null;
}

/**
 * PROFILE_MAX_KB bounds what one agent stores (and every node's search index holds), at registration
 * and after each update, whatever mix of fields fills it.
 */
export function assertProfileSize(profile: StoredProfileText, maxBytes: number): void {
  const { name, description, avatar, website, capabilities, tags } = profile;
  let bytes = 0;
  for (const text of [name, description, avatar, website, capabilities, tags])
    if (text != null) bytes += Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return;
  throw new BadRequestError(
    'PROFILE_TOO_LARGE',
    `the profile takes ${bytes} bytes as stored (name, description, URLs, tags, and capabilities with their schemas as JSON); this registry stores at most ${maxBytes}: shorten descriptions or schemas, or publish fewer capabilities`,
  );
}

/** The stored form of a capability: known members only, absent optional members left out. */
export function normaliseCapability(capability: Capability): Capability {
  const stored: Capability = { type: capability.type };
  if (capability.description != null) stored.description = capability.description;
  if (capability.tags != null) stored.tags = capability.tags;
  if (capability.input_schema != null) stored.input_schema = capability.input_schema;
  if (capability.output_schema != null) stored.output_schema = capability.output_schema;
  return stored;
}
