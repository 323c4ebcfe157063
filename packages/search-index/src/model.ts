/** The index's public shapes: what it takes in, what a query asks and what a page answers. */
/** What the index needs of an agent row (agents table columns). */
export interface IndexedAgent {
  did: string;
  name: string;
  description: string | null;
  /** JSON text, as stored. */
  capabilities: string;
  /** JSON text, as stored. */
  tags: string;
  status: string;
  reputation_score: number;
  /** Break ties of the reputation order, so that equal scores put the better rated, then the more reviewed, first. */
  average_rating: number;
  total_reviews: number;
  created_at: number;
}

export type IndexSort = 'relevance' | 'reputation' | 'created_at';

/** Where a page ended: the keys of its last agent, so the next page starts strictly after it. */
export interface RankKey {
  did: string;
  reputation: number;
  averageRating: number;
  totalReviews: number;
  createdAt: number;
  /** Relevance score (relevance order only). */
  score: number;
}

export interface IndexQuery {
  /** Query words as fullTextTerms gives them; every one must match, the last also as a prefix. */
  terms?: readonly string[];
  /** Capability type in search-key form. */
  capability?: string;
  /** Any of these tags, in search-key form. */
  tags?: readonly string[];
  minReputation?: number;
  sort: IndexSort;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
  /** Keyset paging: start after this agent (offset is then 0). */
  after?: RankKey;
}

/** The filters of a search that the index holds: what matches, without an order or a page. */
export type IndexFilters = Pick<IndexQuery, 'terms' | 'capability' | 'tags' | 'minReputation'>;

export interface IndexPage {
  dids: string[];
  total: number;
  /** Keys of the page's last agent. */
  last?: RankKey;
  /** Whether agents follow the page. */
  more: boolean;
}

/** Where a search's way of ranking by relevance changes; tests lower them to take every way on a small corpus. */
export interface RelevanceTuning {
  /** Above this many matches, relevance is ranked tier by tier (or summed as bitmaps) instead of scoring every match. */
  scoreEveryMatchMax: number;
  /** Most intersections a page makes walking tiers of several words before it sums every match instead. */
  tierIntersectionsMax: number;
  /** How many times (summed over fields) a stem is held before the index keeps its level lists. */
  levelListsFrom: number;
}
