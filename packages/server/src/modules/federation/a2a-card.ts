import { PROFILE_LIMITS } from '@agent-registry/protocol';
import type { Capability } from '@agent-registry/protocol';
import {
  httpUrl,
  limitedCapability,
  limitedDescription,
  limitedText,
  MAX_ENDPOINTS,
} from './listing-limits.js';

/** What an imported card becomes: the listed fields of a remote entry. */
export interface CardListing {
  name: string;
  description: string | null;
  capabilities: Capability[];
  tags: string[];
  endpoints: { type: string; url: string }[];
}

export class InvalidCardError extends Error {}

/**
 * The deepest nesting of arrays and objects a card may have. A2A cards are a few levels deep; the
 * signature check canonicalizes the whole card recursively, so a card nested far deeper (a few hundred
 * KB of brackets) would exhaust the stack there instead of being refused as a card.
 */
export const MAX_CARD_DEPTH = 64;

/** Whether a parsed JSON value nests arrays and objects deeper than `max`; iterative, so any depth is safe. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > max) return true;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return false;
}

/**
 * Reads an A2A agent card (v1.0 AgentCard, JSON names; the v0.3 top-level `url` is read too): refused
 * when it is not an object with a name, a description and a skills array. Each skill becomes a
 * capability (its id the type, its description, its tags); the card's interfaces become the entry's
 * endpoints. Lengths and counts are cut to the profile limits, so a remote entry is never larger than
 * a registered one. A card nested deeper than MAX_CARD_DEPTH is refused before anything walks it
 * recursively (the signature check's canonical JSON).
 */
export function readAgentCard(card: unknown): CardListing {
  if (typeof card !== 'object' || card === null || Array.isArray(card))
    throw new InvalidCardError('the card is not a JSON object');
  if (nestedDeeperThan(card, MAX_CARD_DEPTH))
    throw new InvalidCardError(
      `the card nests arrays and objects more than ${MAX_CARD_DEPTH} levels deep; an A2A card needs a few`,
    );
  const body = card as Record<string, unknown>;
  const name = limitedText(body.name, PROFILE_LIMITS.nameMaxLength);
  if (name === undefined) throw new InvalidCardError('the card has no name (a non-empty string)');
  if (typeof body.description !== 'string') throw new InvalidCardError('the card has no description string');
  if (!Array.isArray(body.skills)) throw new InvalidCardError('the card has no skills array');
  const capabilities: Capability[] = [];
  const tags = new Set<string>();
  for (const [index, raw] of body.skills.entries()) {
    if (typeof raw !== 'object' || raw === null)
      throw new InvalidCardError(`skills[${index}] is not an object`);
    const skill = raw as Record<string, unknown>;
    const capability = limitedCapability(
      limitedText(skill.id, PROFILE_LIMITS.capabilityTypeMaxLength) ?? skill.name,
      skill.description,
      skill.tags,
    );
    if (capability === undefined) throw new InvalidCardError(`skills[${index}] has neither id nor name`);
    for (const tag of capability.tags ?? []) tags.add(tag.toLowerCase());
    if (capabilities.length < PROFILE_LIMITS.capabilitiesMaxCount) capabilities.push(capability);
  }
  const endpoints: CardListing['endpoints'] = [];
  const interfaces = Array.isArray(body.supportedInterfaces) ? body.supportedInterfaces : [];
  for (const raw of interfaces) {
    const url = httpUrl((raw as { url?: unknown } | null)?.url);
    if (url !== undefined && endpoints.length < MAX_ENDPOINTS) endpoints.push({ type: 'a2a', url });
  }
  const legacy = httpUrl(body.url);
  if (endpoints.length === 0 && legacy !== undefined) endpoints.push({ type: 'a2a', url: legacy });
  return {
    name,
    description: limitedDescription(body.description, PROFILE_LIMITS.descriptionMaxLength) ?? null,
    capabilities,
    tags: [...tags].slice(0, PROFILE_LIMITS.tagsMaxCount),
    endpoints,
  };
}
