import type { Db } from '../../db/connect.js';
import { ByteBoundedCache } from '../../kernel/byte-bounded-cache.js';
import type { AgentSearchRow } from '../../modules/discovery/agent-search-store.js';
import { BadRequestError, NotFoundError } from '../../kernel/errors.js';
import {
  activeAgentsInCreationOrder,
  readSearchChange,
  readSearchRow,
  readSearchRows,
  type CreationOrderRow,
} from '../../modules/discovery/agent-search-store.js';
import { readChangeHead } from '../../modules/agents/change-feed-store.js';
import type { SearchPage, SearchService } from '../../modules/discovery/search.js';
import type { SearchRequest } from '../../modules/discovery/search-schemas.js';
import {
  A2A_CARD_TYPE,
  ATTESTATION_TYPES,
  ARD_BASE,
  CATALOG_SPEC_VERSION,
  CATALOG_TYPE,
  agentEntry,
  referral,
  registryEntry,
  type ArdSite,
} from './entries.js';
import { decodePageToken, encodePageToken, requestDigest, type PageKind } from './page-token.js';
import {
  FACET_FIELDS,
  type ArdExploreRequest,
  type ArdListQuery,
  type ArdQueryModel,
  type ArdSearchRequest,
  type FacetField,
} from './schemas.js';
import { parseListFilter, type ListFilter } from './list-filter.js';
import { urnToDid } from './urn.js';

/** Filter keys this registry answers (ard-spec section 7.1 lets a registry refuse the others). */
export const FILTER_KEYS = [
  'type',
  'tags',
  'capabilities',
  'publisher',
  'trustManifest.identityType',
  'trustManifest.attestations.type',
] as const;
export const CATALOG_PAGE_SIZE = 100;
/** Agents a filtered GET /agents request examines at most (a range of one index, a few columns each). */
export const LIST_SCAN_ROWS = 2000;
/** How many of the best matches name the tag and capability values an explore counts. */
const FACET_SAMPLE = 100;
/**
 * Serialised entries kept by DID and change number: a page of search results is mostly ones seen before.
 * Not by `updated_at`, which two updates within a millisecond share.
 */
const ENTRY_CACHE_BYTES = 32 * 1024 * 1024;
/**
 * GET /agents/{identifier}'s answers, one per DID at the change number it was rendered at. Apart from the
 * search's entries, so a crawler walking every agent in turn and searches do not evict each other's.
 */
const PUBLISHED_CACHE_BYTES = 64 * 1024 * 1024;

/** An entry's JSON text as rendered at the agent's change number. */
interface KeptEntry {
  changeSeq: number;
  json: string;
}

/** The row's change number; none while a registration is being stamped (nothing is kept then). */
function changeOf(row: AgentSearchRow): number | undefined {
  return row.change_seq === null ? undefined : Number(row.change_seq);
}

/** The index's part of an ARD query, or `empty` when a filter excludes every entry this registry has. */
interface Narrowed {
  request: Pick<SearchRequest, 'q' | 'capability' | 'tags'>;
  empty: boolean;
  /** The filter in one spelling, for page-token digests. */
  normalised: Record<string, string[]>;
}

export interface ArdServiceDeps {
  search: SearchService;
  db: Db;
  site: ArdSite;
  didWebDomain: string;
  /** Other registries' ARD API bases, answered as referrals (ARD_REFERRALS). */
  referrals: readonly string[];
}

/**
 * ARD's registry API over the registry's own search: every query runs on the same in-memory index and
 * service as GET /api/agents/search; this class only translates (docs/ard.md, "How search maps").
 */
export class ArdService {
  private readonly entries = new ByteBoundedCache<KeptEntry>(ENTRY_CACHE_BYTES);
  private readonly published = new ByteBoundedCache<KeptEntry>(PUBLISHED_CACHE_BYTES);
  private readonly sourceJson: string;
  /** `,"referrals":[...]`, written once; empty without referrals (ARD's CDDL: present means at least one). */
  private readonly referralsJson: string;

  constructor(private readonly deps: ArdServiceDeps) {
    this.sourceJson = JSON.stringify(`${deps.site.publicUrl}${ARD_BASE}`);
    this.referralsJson =
      deps.referrals.length === 0 ? '' : `,"referrals":${JSON.stringify(deps.referrals.map(referral))}`;
  }

  /** The entry's JSON text, from `cache` while the agent's change number is the one it was rendered at. */
  private entryJson(row: AgentSearchRow, cache: ByteBoundedCache<KeptEntry> = this.entries): string {
    const changeSeq = changeOf(row);
    const cached = cache.get(row.did);
    if (cached !== undefined && cached.changeSeq === changeSeq) return cached.json;
    const json = JSON.stringify(agentEntry(row, this.deps.site));
    if (changeSeq === undefined) cache.delete(row.did);
    // Entries are ASCII but for names and descriptions: about a byte a character, and the key.
    else cache.set(row.did, { changeSeq, json }, json.length + row.did.length + 96);
    return json;
  }

  /** Entries' JSON texts as one array. */
  private entriesJson(rows: readonly AgentSearchRow[]): string {
    return `[${rows.map((row) => this.entryJson(row)).join(',')}]`;
  }

  /** The change feed's head: what a kept catalog page is checked against. */
  changeHead(): Promise<number> {
    return readChangeHead(this.deps.db);
  }

  private get source(): string {
    return `${this.deps.site.publicUrl}${ARD_BASE}`;
  }

  /** POST /search's answer, as JSON text: each result is the cached entry with score and source. */
  async search(body: ArdSearchRequest): Promise<string> {
    const narrowed = narrow(body.query.text, body.query.filter, this.deps.site.publisher);
    const pageSize = body.pageSize ?? 10;
    const digest = requestDigest({ t: body.query.text, f: narrowed.normalised, s: pageSize });
    const position =
      body.pageToken === undefined ? undefined : decodePageToken(body.pageToken, 'search', digest);
    const referrals = body.federation === 'referrals' ? this.referralsJson : '';
    if (narrowed.empty) return `{"results":[]${referrals}}`;
    const page = await this.deps.search.searchPage({
      ...narrowed.request,
      limit: pageSize,
      cursor: position?.cursor,
    });
    const first = position?.rank ?? 0;
    const results = page.rows.map((row, index) => {
      const entry = this.entryJson(row);
      const score = relevanceScore(first + index, page.total);
      return `${entry.slice(0, -1)},"score":${score},"source":${this.sourceJson}}`;
    });
    const next = this.nextToken('search', digest, page, first);
    const token = next === undefined ? '' : `,"pageToken":${JSON.stringify(next)}`;
    return `{"results":[${results.join(',')}]${referrals}${token}}`;
  }

  async entry(identifier: string): Promise<string> {
    const did = urnToDid(identifier, this.deps.site.publisher, this.deps.didWebDomain);
    const unpublished = (): NotFoundError =>
      new NotFoundError('AGENT_NOT_FOUND', `no active agent is published as ${identifier}`);
    // A kept entry costs a two-column read to confirm, as a cached profile does; only an agent not kept,
    // or changed since, pays for its whole row and its rendering.
    const kept = this.published.get(did);
    if (kept !== undefined) {
      const current = await readSearchChange(this.deps.db, did);
      if (current === undefined || current.status !== 'active') throw unpublished();
      if (current.change_seq !== null && Number(current.change_seq) === kept.changeSeq) return kept.json;
    }
    const row = await readSearchRow(this.deps.db, did);
    if (row === undefined || row.status !== 'active') throw unpublished();
    return this.entryJson(row, this.published);
  }

  async list(query: ArdListQuery): Promise<string> {
    if (query.orderBy !== undefined && !/^\s*createdAt(\s+asc)?\s*$/i.test(query.orderBy)) {
      throw new BadRequestError(
        'VALIDATION_FAILED',
        'orderBy accepts only createdAt (oldest first, the order of this listing); leave it out otherwise',
      );
    }
    const pageSize = query.pageSize ?? 20;
    const text = query.filter?.trim() ?? '';
    const filter = text === '' ? {} : parseListFilter(text);
    const digest = requestDigest({ s: pageSize, ...(text === '' ? {} : { f: filter }) });
    if (
      (filter.type !== undefined && !filter.type.includes(A2A_CARD_TYPE)) ||
      (filter.publisherId !== undefined && !filter.publisherId.includes(this.deps.site.publisher))
    ) {
      return '{"items":[],"total":0}';
    }
    if (
      filter.displayName !== undefined ||
      filter.createdAfter !== undefined ||
      filter.updatedAfter !== undefined
    ) {
      return this.filteredList(filter, pageSize, digest, query.pageToken);
    }
    const { rows, page, pageToken } = await this.listed('list', pageSize, query.pageToken, digest);
    const token = pageToken === undefined ? '' : `,"pageToken":${JSON.stringify(pageToken)}`;
    return `{"items":${this.entriesJson(rows)},"total":${page.total}${token}}`;
  }

  /**
   * A listing filtered by name or time, in creation order straight from the database: each request
   * examines at most LIST_SCAN_ROWS agents, so a filter few agents match costs no more than a page of
   * them; the page may then hold fewer than pageSize (even none) with a pageToken to go on. No `total`
   * (ARD's list answer makes it optional): counting would read every agent the filter names.
   */
  private async filteredList(
    filter: ListFilter,
    pageSize: number,
    digest: string,
    pageToken: string | undefined,
  ): Promise<string> {
    const position = pageToken === undefined ? undefined : decodePageToken(pageToken, 'list', digest);
    const candidates = await activeAgentsInCreationOrder(this.deps.db, {
      createdAfter: filter.createdAfter,
      after: position === undefined ? undefined : creationKey(position.cursor),
      limit: LIST_SCAN_ROWS,
    });
    const matches = (row: CreationOrderRow): boolean =>
      (filter.displayName === undefined || row.name.toLowerCase().includes(filter.displayName)) &&
      (filter.updatedAfter === undefined || row.updated_at > filter.updatedAfter);
    const matched: string[] = [];
    let index = 0;
    for (; index < candidates.length && matched.length < pageSize; index += 1) {
      const row = candidates[index] as CreationOrderRow;
      if (matches(row)) matched.push(row.did);
    }
    const last = candidates[index - 1];
    const more = candidates.length === LIST_SCAN_ROWS || candidates.slice(index).some((row) => matches(row));
    const rows = await readSearchRows(this.deps.db, matched);
    const token =
      more && last !== undefined
        ? `,"pageToken":${JSON.stringify(
            encodePageToken('list', digest, { cursor: JSON.stringify([last.created_at, last.did]), rank: 0 }),
          )}`
        : '';
    return `{"items":${this.entriesJson(rows)}${token}}`;
  }

  /** One page of the published catalog: a bounded ai-catalog document chained to the next page. */
  async catalogPage(pageToken: string | undefined): Promise<string> {
    const { rows, pageToken: next, first } = await this.listed('catalog', CATALOG_PAGE_SIZE, pageToken);
    const entries = rows.map((row) => this.entryJson(row));
    if (next !== undefined) {
      const more = first + rows.length;
      entries.push(
        JSON.stringify({
          identifier: `urn:air:${this.deps.site.publisher}:catalog:agents-from-${more}`,
          displayName: 'Agent Registry: the next page of agents',
          type: CATALOG_TYPE,
          url: `${this.source}/catalog?pageToken=${encodeURIComponent(next)}`,
          description: `Active agents from number ${more + 1} on, oldest first`,
        }),
      );
    }
    const head = JSON.stringify({ specVersion: CATALOG_SPEC_VERSION, host: this.host() });
    return `${head.slice(0, -1)},"entries":[${entries.join(',')}]}`;
  }

  /** The publisher file (/.well-known/ai-catalog.json and ard.json): the search service and the first page. */
  manifest(): Record<string, unknown> {
    return {
      specVersion: CATALOG_SPEC_VERSION,
      host: this.host(),
      entries: [
        registryEntry(this.deps.site),
        {
          identifier: `urn:air:${this.deps.site.publisher}:catalog:agents`,
          displayName: 'Agent Registry: every active agent',
          type: CATALOG_TYPE,
          url: `${this.source}/catalog`,
          description: `Every active agent, ${CATALOG_PAGE_SIZE} per page, oldest first; each page links to the next`,
          tags: ['agents', 'catalog'],
        },
      ],
    };
  }

  async explore(body: ArdExploreRequest): Promise<Record<string, unknown>> {
    const narrowed = narrow(body.query?.text, body.query?.filter, this.deps.site.publisher);
    const fields: FacetField[] = [];
    for (const facet of body.resultType.facets) {
      if (!(FACET_FIELDS as readonly string[]).includes(facet.field)) {
        throw new BadRequestError(
          'VALIDATION_FAILED',
          `facet field "${facet.field.slice(0, 64)}" is not supported; use one of ${FACET_FIELDS.join(', ')}`,
        );
      }
      if (fields.includes(facet.field as FacetField)) {
        throw new BadRequestError('VALIDATION_FAILED', `facet field "${facet.field}" is asked for twice`);
      }
      fields.push(facet.field as FacetField);
    }
    const total = narrowed.empty ? 0 : await this.deps.search.count(narrowed.request);
    let sample: SearchPage | undefined;
    const facets: Record<string, unknown> = {};
    for (const facet of body.resultType.facets) {
      const limit = facet.limit ?? 20;
      const minCount = facet.minCount ?? 1;
      let counted: { value: string; count: number }[];
      if (facet.field === 'type') counted = [{ value: A2A_CARD_TYPE, count: total }];
      else if (facet.field === 'publisher') counted = [{ value: this.deps.site.publisher, count: total }];
      else if (total === 0) counted = [];
      else {
        sample ??= await this.deps.search.searchPage({ ...narrowed.request, limit: FACET_SAMPLE });
        counted = await this.countValues(facet.field as 'tags' | 'capabilities', narrowed.request, sample);
      }
      const kept = counted.filter((bucket) => bucket.count >= minCount).sort(byCount);
      const shown = kept.slice(0, limit);
      const result: Record<string, unknown> = { buckets: shown };
      if (facet.field === 'type' || facet.field === 'publisher') {
        result.otherCount = kept.slice(limit).reduce((sum, bucket) => sum + bucket.count, 0);
      }
      facets[facet.field] = result;
    }
    return { resultType: 'facets', facets };
  }

  /**
   * Counts over the whole matched set, by the index, for the tag or capability values found among the best
   * matches. The index filters on one capability and on any of several tags, so with a filter on the same
   * field the buckets are that filter's own values (docs/decisions/ard.md, "ARD: explore facets").
   */
  private async countValues(
    field: 'tags' | 'capabilities',
    request: Narrowed['request'],
    sample: SearchPage,
  ): Promise<{ value: string; count: number }[]> {
    let values: string[];
    if (field === 'tags' && request.tags !== undefined) values = request.tags.split(',');
    else if (field === 'capabilities' && request.capability !== undefined) values = [request.capability];
    else {
      const seen = new Set<string>();
      for (const row of sample.rows) {
        const listed =
          field === 'tags'
            ? (JSON.parse(row.tags) as string[])
            : (JSON.parse(row.capabilities) as { type: string }[]).map((capability) => capability.type);
        for (const value of listed) seen.add(value);
      }
      values = [...seen];
    }
    const counted: { value: string; count: number }[] = [];
    for (const value of values) {
      const count = await this.deps.search.count(
        field === 'tags' ? { ...request, tags: value } : { ...request, capability: value },
      );
      counted.push({ value, count });
    }
    return counted;
  }

  private async listed(
    kind: PageKind,
    pageSize: number,
    pageToken: string | undefined,
    digest: string = requestDigest({ s: pageSize }),
  ): Promise<{ rows: AgentSearchRow[]; page: SearchPage; pageToken?: string; first: number }> {
    const position = pageToken === undefined ? undefined : decodePageToken(pageToken, kind, digest);
    const page = await this.deps.search.searchPage({
      sort: 'created_at',
      order: 'asc',
      limit: pageSize,
      cursor: position?.cursor,
    });
    const first = position?.rank ?? 0;
    return { rows: page.rows, page, pageToken: this.nextToken(kind, digest, page, first), first };
  }

  private nextToken(kind: PageKind, digest: string, page: SearchPage, first: number): string | undefined {
    if (page.next_cursor === null) return undefined;
    return encodePageToken(kind, digest, { cursor: page.next_cursor, rank: first + page.rows.length });
  }

  private host(): Record<string, unknown> {
    return {
      displayName: 'Agent Registry',
      identifier: `did:web:${this.deps.didWebDomain}`,
      documentationUrl: `${this.deps.site.publicUrl}/docs`,
    };
  }
}

/** The creation-order position a filtered listing's token holds; anything else was not issued here. */
function creationKey(cursor: string): { createdAt: number; did: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    parsed[1].length > 256
  ) {
    throw new BadRequestError(
      'INVALID_CURSOR',
      'pageToken is not one this registry issued: pass the pageToken of the previous page unchanged, or start again without it',
    );
  }
  return { createdAt: parsed[0] as number, did: parsed[1] };
}

function byCount(a: { value: string; count: number }, b: { value: string; count: number }): number {
  return b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
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
function narrow(text: string | undefined, filter: ArdQueryModel['filter'], publisher: string): Narrowed {
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
