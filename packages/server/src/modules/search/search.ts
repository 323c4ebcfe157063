import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { readSearchRows, type AgentSearchRow, type SearchSort } from './agent-search-store.js';
import type { SearchIndex } from '@agent-registry/search-index';
import {
  decodeSearchCursor,
  encodeSearchCursor,
  searchDigest,
  type SearchPosition,
} from './search-cursor.js';
import { BadRequestError } from '../../kernel/errors.js';
import type { Capability } from '@agent-registry/protocol';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';
import { DAY_MS } from '../service-record/service-record-model.js';
import { searchServiceRecord } from './service-record-search.js';
import type { AgentSummary, HitAvailability, SearchRequest, SearchResponse } from './search-schemas.js';
import { registeredProvenance } from '../agents/provenance-schemas.js';
import { capabilitiesDigestOf } from './capabilities-digest.js';
import type { Observed } from './observed-schema.js';
import type { HomeReport } from './home-report-schema.js';
import {
  indexFilters,
  onServiceRecord,
  parseCapability,
  parseQuery,
  parseTags,
  servedByIndex,
  type SearchFilter,
} from './search-filter.js';

/**
 * A search's answer with its agents as stored rows: capabilities and tags still the JSON text the
 * registry wrote, so the REST face can put them into its response as they are (modules/search/search-json.ts).
 */
export interface SearchPage extends Omit<SearchResponse, 'agents'> {
  rows: SearchRow[];
  /** Status and last sighting of the page's observed agents; the others' status is unknown. */
  availability: ReadonlyMap<string, HitAvailability>;
  /** This registry's public URL: the home of every row without `remote`. */
  home_registry: string;
  /** The verified domains of the page's agents that hold any. */
  domains: ReadonlyMap<string, readonly string[]>;
}

/**
 * A row of a search page. A remote entry (modules/federation/) carries where it lives and its provenance
 * as JSON text; the registry's own agents carry neither (their provenance is `registered`, here).
 */
export type SearchRow = AgentSearchRow & {
  remote?: { home_registry: string; provenance: string; observed?: Observed; home?: HomeReport };
};

/** An index kept equal to its rows, and those rows by index key: what a search runs over. */
export interface SearchSource {
  follower: { readonly index: SearchIndex; catchUp(): Promise<void> };
  readRows(keys: readonly string[]): Promise<SearchRow[]>;
  /** Keys of rows other than the registry's agents that are available now (available=true); none if absent. */
  availableKeys?(): Promise<string[]>;
}

/** Where served searches are counted (the statistics service), without a database write per search. */
export interface SearchCounter {
  recordSearch(): void;
}

/** Which agents are online now (modules/availability/). */
export interface OnlineAgents {
  onlineAgents(): Promise<string[]>;
  /** Status and last sighting of each of `dids` that was ever observed (one read for a page). */
  statuses(dids: readonly string[]): Promise<ReadonlyMap<string, HitAvailability>>;
}

const NO_DOMAINS: ReadonlyMap<string, readonly string[]> = new Map();

/** The availability of a hit never observed here (a remote entry, or an agent no worker has been seen for). */
const UNOBSERVED: HitAvailability = Object.freeze({ status: 'unknown', last_seen_at: null });

export interface SearchServiceDeps {
  db: Db;
  clock: Clock;
  searches: SearchCounter;
  /** The node's in-memory search index: every search starts there. */
  index: { readonly index: SearchIndex; catchUp(): Promise<void> };
  availability: OnlineAgents;
  /** The registry's public URL (home_registry of its own agents). */
  publicUrl: string;
  /**
   * The registry's agents and the remote entries together (modules/federation/), for scope=federated;
   * absent, scope=federated searches the registry's own agents (there is nothing else).
   */
  federated?: SearchSource;
  /** The agents holding a verified domain (modules/domains/), for domain=; absent, domain= matches none. */
  domainHolders?: (domain: string) => Promise<string[]>;
  /** The verified domains of some agents (one read for a page); absent, hits show none. */
  domainsOf?: (dids: readonly string[]) => Promise<ReadonlyMap<string, readonly string[]>>;
}

export class SearchService {
  private readonly local: SearchSource;
  private readonly registeredHere: AgentSummary['provenance'];

  constructor(private readonly deps: SearchServiceDeps) {
    const db = deps.db;
    this.local = { follower: deps.index, readRows: (dids) => readSearchRows(db, dids) };
    this.registeredHere = registeredProvenance(deps.publicUrl);
  }

  async search(request: SearchRequest): Promise<SearchResponse> {
    const { rows, home_registry: _home, availability, domains, ...page } = await this.searchPage(request);
    return { agents: rows.map((row) => this.toSummary(row, availability, domains)), ...page };
  }

  private toSummary(
    row: SearchRow,
    availability: SearchPage['availability'],
    domains: SearchPage['domains'],
  ): AgentSummary {
    const held = row.remote === undefined ? domains.get(row.did) : undefined;
    return {
      ...toSummary(row),
      home_registry: row.remote?.home_registry ?? this.deps.publicUrl,
      provenance:
        row.remote === undefined
          ? this.registeredHere
          : (JSON.parse(row.remote.provenance) as AgentSummary['provenance']),
      ...(row.remote === undefined ? { capabilities_digest: capabilitiesDigestOf(row.capabilities) } : {}),
      ...(row.remote?.observed === undefined ? {} : { observed: row.remote.observed }),
      ...(row.remote?.home === undefined ? {} : { home: row.remote.home }),
      availability: hitAvailability(row, availability),
      ...(held === undefined ? {} : { domains: [...held] }),
    };
  }

  private source(request: SearchRequest): SearchSource {
    return request.scope === 'federated' && this.deps.federated !== undefined
      ? this.deps.federated
      : this.local;
  }

  /**
   * How many active agents match the index's filters of a search (full text, capability, tags, least
   * reputation): what a facet count needs, without reading a row.
   */
  async count(request: Pick<SearchRequest, 'q' | 'capability' | 'tags' | 'min_reputation'>): Promise<number> {
    const follower = this.deps.index;
    await follower.catchUp();
    return follower.index.count({
      terms: request.q === undefined ? undefined : parseQuery(request.q),
      capability: request.capability === undefined ? undefined : parseCapability(request.capability),
      tags: request.tags === undefined ? undefined : parseTags(request.tags),
      minReputation: request.min_reputation,
    });
  }

  async searchPage(request: SearchRequest): Promise<SearchPage> {
    const terms = request.q === undefined ? undefined : parseQuery(request.q);
    const capability = request.capability === undefined ? undefined : parseCapability(request.capability);
    const tags = request.tags === undefined ? undefined : parseTags(request.tags);
    const domain = request.domain?.trim().toLowerCase().replace(/\.$/, '');
    const limit = request.limit ?? SEARCH_RULES.limitDefault;
    // Relevance orders full-text results unless the caller asks for another sort.
    const sort: SearchSort =
      request.sort ?? (terms === undefined ? SEARCH_RULES.sortDefault : SEARCH_RULES.sortDefaultWithQuery);
    const filter: SearchFilter = {
      terms,
      capability,
      tags,
      minReputation: request.min_reputation,
      minSuccessRate: request.min_success_rate,
      activeSince:
        request.active_within_days === undefined
          ? undefined
          : this.deps.clock.now() - request.active_within_days * DAY_MS,
      available: request.available === 'true',
      sort,
      order: request.order ?? SEARCH_RULES.orderDefault,
      limit,
      offset: request.offset ?? 0,
    };
    const digest = searchDigest({
      terms,
      capability,
      tags,
      min_reputation: request.min_reputation,
      min_success_rate: request.min_success_rate,
      active_within_days: request.active_within_days,
      ...(filter.available ? { available: true } : {}),
      ...(domain === undefined ? {} : { domain }),
      // Only a federated search says its scope: cursors of local searches stay what they were.
      ...(request.scope === 'federated' ? { scope: 'federated' } : {}),
      sort,
      order: filter.order,
    });
    let position: SearchPosition | undefined;
    if (request.cursor !== undefined) {
      // The route's schema defaults offset to 0: only a non-zero offset says something else.
      if (request.offset !== undefined && request.offset !== 0) {
        throw new BadRequestError(
          'INVALID_CURSOR',
          'send either cursor or offset, not both: cursor already says where the page starts',
        );
      }
      position = decodeSearchCursor(request.cursor, digest);
    }
    const byAvailability = filter.available || filter.sort === 'availability';
    if (byAvailability && onServiceRecord(filter)) {
      throw new BadRequestError(
        'VALIDATION_FAILED',
        'available=true and sort=availability cannot be combined with min_success_rate, active_within_days, sort=success_rate or sort=latency: drop one of them',
      );
    }
    if (domain !== undefined && (byAvailability || onServiceRecord(filter))) {
      throw new BadRequestError(
        'VALIDATION_FAILED',
        'domain cannot be combined with available=true, sort=availability, min_success_rate, active_within_days, sort=success_rate or sort=latency: drop one of them',
      );
    }
    const source = this.source(request);
    const result =
      domain !== undefined
        ? await this.searchByPosition(source, filter, position, digest, this.domainPage(filter, domain))
        : byAvailability
          ? await this.searchByPosition(
              source,
              filter,
              position,
              digest,
              this.availabilityPage(filter, source),
            )
          : servedByIndex(filter)
            ? await this.searchIndex(source, filter, position, digest)
            : await this.searchByPosition(source, filter, position, digest, this.serviceRecordPage(filter));
    this.deps.searches.recordSearch();
    const local = result.rows.filter((row) => row.remote === undefined).map((row) => row.did);
    const [availability, domains] = await Promise.all([
      this.deps.availability.statuses(local),
      local.length === 0 || this.deps.domainsOf === undefined ? NO_DOMAINS : this.deps.domainsOf(local),
    ]);
    return {
      rows: result.rows,
      availability,
      domains,
      total: result.total,
      limit,
      offset: result.offset,
      next_cursor: result.next_cursor,
      home_registry: this.deps.publicUrl,
    };
  }

  private async searchIndex(
    source: SearchSource,
    filter: SearchFilter,
    position: SearchPosition | undefined,
    digest: string,
  ): Promise<Omit<SearchPage, 'limit' | 'home_registry' | 'availability' | 'domains'>> {
    const follower = source.follower;
    await follower.catchUp();
    const offset = position?.kind === 'offset' ? position.offset : filter.offset;
    const page = follower.index.search({
      ...indexFilters(filter),
      sort: filter.sort as 'relevance' | 'reputation' | 'created_at',
      order: filter.order,
      limit: filter.limit,
      offset: position === undefined ? offset : 0,
      after: position?.kind === 'key' ? position.key : undefined,
    });
    const rows = await source.readRows(page.dids);
    return {
      rows,
      total: page.total,
      offset: position === undefined ? offset : 0,
      next_cursor:
        page.more && page.last !== undefined
          ? encodeSearchCursor(digest, { kind: 'key', key: page.last })
          : null,
    };
  }

  /**
   * Searches paged by position (availability, the service record): `page` picks the keys of the page
   * from the index, with the database where it must, and their rows are read by key.
   */
  private async searchByPosition(
    source: SearchSource,
    filter: SearchFilter,
    position: SearchPosition | undefined,
    digest: string,
    page: PositionPage,
  ): Promise<Omit<SearchPage, 'limit' | 'home_registry' | 'availability' | 'domains'>> {
    if (position?.kind === 'key') {
      throw new BadRequestError(
        'INVALID_CURSOR',
        'cursor belongs to a different search: start again without cursor',
      );
    }
    const offset = position?.offset ?? filter.offset;
    const { dids, total } = await page(source.follower, offset);
    const rows = await source.readRows(dids);
    const next = offset + filter.limit;
    return {
      rows,
      total,
      offset: position === undefined ? offset : 0,
      next_cursor: next < total ? encodeSearchCursor(digest, { kind: 'offset', offset: next }) : null,
    };
  }

  /**
   * available=true (only the agents online now, in the asked order) and sort=availability (those first,
   * then the other matches, each group by reputation): the index answers the other filters and the
   * database who is online.
   */
  private availabilityPage(filter: SearchFilter, source: SearchSource): PositionPage {
    return async (follower, offset) => {
      const [agents, others] = await Promise.all([
        this.deps.availability.onlineAgents(),
        source.availableKeys?.() ?? [],
        follower.catchUp(),
      ]);
      const online = others.length === 0 ? agents : agents.concat(others);
      const index = follower.index;
      const end = offset + filter.limit;
      const filters = indexFilters(filter);
      const sort = filter.sort === 'availability' ? 'reputation' : filter.sort;
      const first = index.keepMatching(filters, online, {
        sort: sort as 'relevance' | 'reputation' | 'created_at',
        order: filter.order,
      });
      let dids = first.slice(offset, end);
      let total = first.length;
      if (!filter.available) {
        total = index.count(filters);
        if (dids.length < filter.limit && end > first.length) {
          // The others by reputation: the first `end` matches hold every one this page can need.
          const onlineSet = new Set(first);
          const others = index
            .search({ ...filters, sort: 'reputation', order: filter.order, limit: end, offset: 0 })
            .dids.filter((did) => !onlineSet.has(did));
          dids = first.concat(others).slice(offset, end);
        }
      }
      return { dids, total };
    };
  }

  /** domain=: the index's other filters and order over the agents holding the domain. */
  private domainPage(filter: SearchFilter, domain: string): PositionPage {
    return async (follower, offset) => {
      const [holders] = await Promise.all([this.deps.domainHolders?.(domain) ?? [], follower.catchUp()]);
      const matching = follower.index.keepMatching(indexFilters(filter), holders, {
        sort: filter.sort as 'relevance' | 'reputation' | 'created_at',
        order: filter.order,
      });
      return { dids: matching.slice(offset, offset + filter.limit), total: matching.length };
    };
  }

  /** Service-record sorts and filters: the index and the database together. */
  private serviceRecordPage(filter: SearchFilter): PositionPage {
    return async (follower, offset) => {
      await follower.catchUp();
      return searchServiceRecord(this.deps.db, follower.index, {
        filters: indexFilters(filter),
        minSuccessRate: filter.minSuccessRate,
        activeSince: filter.activeSince,
        sort: filter.sort,
        order: filter.order,
        limit: filter.limit,
        offset,
      });
    };
  }
}

/** The keys of a position-paged search's page from `offset`, and how many match in all. */
type PositionPage = (
  follower: SearchSource['follower'],
  offset: number,
) => Promise<{ dids: string[]; total: number }>;

function toSummary(row: AgentSearchRow): Omit<AgentSummary, 'home_registry' | 'provenance' | 'availability'> {
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

/** A row's availability on the page: remote entries are never observed here. */
export function hitAvailability(row: SearchRow, availability: SearchPage['availability']): HitAvailability {
  return (row.remote === undefined ? availability.get(row.did) : undefined) ?? UNOBSERVED;
}
