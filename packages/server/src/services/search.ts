import type { Clock } from '../clock.js';
import type { Db } from '../db/connect.js';
import { fullTextTerms } from '../db/full-text.js';
import { searchKey } from '../db/stores/agent-index.js';
import {
  searchAgents,
  type AgentSearchRow,
  type SearchOrder,
  type SearchSort,
} from '../db/stores/agent-search.js';
import { BadRequestError } from '../errors.js';
import type { Capability } from '../identity/types.js';
import { SEARCH_RULES } from './discovery-rules.js';
import { LIMITS } from './limits.js';
import { DAY_MS } from './service-record-model.js';

/** GET /api/agents/search query; the route schema has already checked types and ranges. */
export interface SearchRequest {
  q?: string;
  capability?: string;
  tags?: string;
  min_reputation?: number;
  /** Extension (issue 17): 30-day success rate 0-1 from the measured service record. */
  min_success_rate?: number;
  /** Extension (issue 17): completed a counted call within this many days (liveness). */
  active_within_days?: number;
  limit?: number;
  offset?: number;
  sort?: 'reputation' | 'created_at' | 'success_rate' | 'latency';
  order?: SearchOrder;
}

export interface AgentSummary {
  did: string;
  name: string;
  description: string | null;
  capabilities: Capability[];
  tags: string[];
  reputation_score: number;
  average_rating: number;
  total_reviews: number;
  created_at: number;
  status: 'active';
}

export interface SearchResponse {
  agents: AgentSummary[];
  total: number;
  limit: number;
  offset: number;
}

/** Where served searches are counted (the statistics service), without a database write per search. */
export interface SearchCounter {
  recordSearch(): void;
}

export interface SearchServiceDeps {
  db: Db;
  clock: Clock;
  searches: SearchCounter;
}

export class SearchService {
  constructor(private readonly deps: SearchServiceDeps) {}

  async search(request: SearchRequest): Promise<SearchResponse> {
    const terms = request.q === undefined ? undefined : parseQuery(request.q);
    const capability = request.capability === undefined ? undefined : parseCapability(request.capability);
    const tags = request.tags === undefined ? undefined : parseTags(request.tags);
    const limit = request.limit ?? SEARCH_RULES.limitDefault;
    const offset = request.offset ?? 0;
    // Relevance orders full-text results unless the caller asks for another sort.
    const sort: SearchSort = request.sort ?? (terms === undefined ? 'reputation' : 'relevance');
    const { rows, total } = await searchAgents(this.deps.db, {
      terms,
      capability,
      tags,
      minReputation: request.min_reputation,
      minSuccessRate: request.min_success_rate,
      activeSince:
        request.active_within_days === undefined
          ? undefined
          : this.deps.clock.now() - request.active_within_days * DAY_MS,
      sort,
      order: request.order ?? 'desc',
      limit,
      offset,
    });
    this.deps.searches.recordSearch();
    return { agents: rows.map(toSummary), total, limit, offset };
  }
}

function parseQuery(q: string): string[] {
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

function parseCapability(capability: string): string {
  const key = searchKey(capability);
  if (key === '') throw new BadRequestError('VALIDATION_FAILED', 'capability must not be blank');
  return key;
}

/** Comma-separated, any-of; blanks between commas are ignored, the same limits as profile tags apply. */
function parseTags(raw: string): string[] {
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

function toSummary(row: AgentSearchRow): AgentSummary {
  return {
    did: row.did,
    name: row.name,
    description: row.description,
    capabilities: JSON.parse(row.capabilities) as Capability[],
    tags: JSON.parse(row.tags) as string[],
    reputation_score: row.reputation_score,
    average_rating: row.average_rating,
    total_reviews: row.total_reviews,
    created_at: Number(row.created_at),
    status: 'active',
  };
}
