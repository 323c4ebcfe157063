import { fullTextTerms, searchKey, type IndexFilters } from '@agent-registry/search-index';
import { BadRequestError } from '../../kernel/errors.js';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';
import { LIMITS } from '../../kernel/limits.js';
import type { SearchOrder, SearchSort } from './agent-search-store.js';

/** A search as the service runs it: query words parsed, keys normalised, defaults applied. */
export interface SearchFilter {
  terms?: string[];
  capability?: string;
  tags?: string[];
  minReputation?: number;
  minSuccessRate?: number;
  /** Epoch ms, from active_within_days. */
  activeSince?: number;
  /** available=true: only agents online now. */
  available: boolean;
  sort: SearchSort;
  order: SearchOrder;
  limit: number;
  offset: number;
}

/** The filters the index answers by itself. */
export function indexFilters(filter: SearchFilter): IndexFilters {
  return {
    terms: filter.terms,
    capability: filter.capability,
    tags: filter.tags,
    minReputation: filter.minReputation,
  };
}

/** Filters or sorts on the measured service record, which the search index does not hold. */
export function onServiceRecord(filter: SearchFilter): boolean {
  return (
    filter.minSuccessRate !== undefined ||
    filter.activeSince !== undefined ||
    filter.sort === 'success_rate' ||
    filter.sort === 'latency'
  );
}

/** The index alone serves every search but those on the service record or on availability. */
export function servedByIndex(filter: SearchFilter): boolean {
  return !onServiceRecord(filter) && filter.sort !== 'availability';
}

export function parseQuery(q: string): string[] {
  const terms = fullTextTerms(q);
  if (terms.length === 0) {
    throw new BadRequestError('INVALID_SEARCH_QUERY', 'q must contain at least one letter or digit');
  }
  if (terms.length > SEARCH_RULES.queryMaxTerms) {
    throw new BadRequestError(
      'INVALID_SEARCH_QUERY',
      `q may contain at most ${SEARCH_RULES.queryMaxTerms} words, got ${terms.length}`,
    );
  }
  return terms;
}

export function parseCapability(capability: string): string {
  const key = searchKey(capability);
  if (key === '') throw new BadRequestError('VALIDATION_FAILED', 'capability must not be blank');
  return key;
}

/** Comma-separated, any-of; blanks between commas are ignored, the same limits as profile tags apply. */
export function parseTags(raw: string): string[] {
  const tags = [...new Set(raw.split(',').map(searchKey))].filter((tag) => tag !== '');
  if (tags.length === 0) {
    throw new BadRequestError('INVALID_TAGS', 'tags must name at least one tag, e.g. tags=python,finance');
  }
  if (tags.length > SEARCH_RULES.tagsMaxCount) {
    throw new BadRequestError('INVALID_TAGS', `tags may name at most ${SEARCH_RULES.tagsMaxCount} tags`);
  }
  const long = tags.find((tag) => tag.length > LIMITS.tagMaxLength);
  if (long !== undefined) {
    throw new BadRequestError(
      'INVALID_TAGS',
      `each tag is at most ${LIMITS.tagMaxLength} characters; "${long.slice(0, 60)}..." is longer`,
    );
  }
  return tags;
}
