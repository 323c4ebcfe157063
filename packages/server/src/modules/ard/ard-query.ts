import { BadRequestError } from '../../kernel/errors.js';
import type { SearchRequest } from '../search/search-schemas.js';
import { A2A_CARD_TYPE, ATTESTATION_TYPES } from './entries.js';
import type { ArdQueryModel } from './schemas.js';

/** Filter keys this registry answers (ard-spec section 7.1 lets a registry refuse the others). */
export const FILTER_KEYS = [
  'type',
  'tags',
  'capabilities',
  'publisher',
  'trustManifest.identityType',
  'trustManifest.attestations.type',
] as const;
/** The index's part of an ARD query, or `empty` when a filter excludes every entry this registry has. */
export interface Narrowed {
  request: Pick<SearchRequest, 'q' | 'capability' | 'tags'>;
  empty: boolean;
  /** The filter in one spelling, for page-token digests. */
  normalised: Record<string, string[]>;
}

/**
 * ARD's score (0-100) from the rank in the registry's relevance order: the first of n scores 100, the
 * last about 100/n. It orders, it does not measure (ard-spec: relevance only, never trust).
 */
export function relevanceScore(rank: number, total: number): number {
  if (total <= 0) return 0;
  return Math.max(1, Math.min(100, Math.round((100 * (total - rank)) / total)));
}

const values = (value: string | string[]): string[] => (Array.isArray(value) ? value : [value]);

/** ARD's filter onto the search's filters: OR within a key, AND across keys (ard-spec section 7.1). */
export function narrow(
  text: string | undefined,
  filter: ArdQueryModel['filter'],
  publisher: string,
): Narrowed {
  const request: Narrowed['request'] = { q: text };
  const normalised: Record<string, string[]> = {};
  let empty = false;
  for (const [key, raw] of Object.entries(filter ?? {})) {
    const given = values(raw);
    normalised[key] = [...given].sort();
    switch (key) {
      case 'type':
        if (!given.some((value) => value.toLowerCase() === A2A_CARD_TYPE)) empty = true;
        break;
      case 'publisher':
        if (!given.some((value) => value.toLowerCase() === publisher)) empty = true;
        break;
      case 'trustManifest.identityType':
        if (!given.some((value) => value.toLowerCase() === 'did')) empty = true;
        break;
      case 'trustManifest.attestations.type':
        // Every entry carries the same two attestations (entries.ts): a value names all or none.
        if (!given.some((value) => ATTESTATION_TYPES.includes(value.toLowerCase()))) empty = true;
        break;
      case 'tags':
        if (given.some((value) => value.includes(','))) {
          throw new BadRequestError(
            'INVALID_TAGS',
            'a tags filter value may not contain a comma: give each tag as its own array element',
          );
        }
        request.tags = given.join(',');
        break;
      case 'capabilities':
        if (given.length > 1) {
          throw new BadRequestError(
            'VALIDATION_FAILED',
            'filter.capabilities takes one capability type on this registry; search once per capability type',
          );
        }
        request.capability = given[0];
        break;
      default:
        throw new BadRequestError(
          'VALIDATION_FAILED',
          `filter key "${key.slice(0, 64)}" is not supported; use ${FILTER_KEYS.join(', ')}`,
        );
    }
  }
  return { request, empty, normalised };
}
