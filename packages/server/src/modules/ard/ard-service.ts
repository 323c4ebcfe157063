import type { Db } from '../../db/connect.js';
import { ByteBoundedCache } from '../../kernel/byte-bounded-cache.js';
import type { AgentSearchRow } from '../search/agent-search-store.js';
import { BadRequestError, NotFoundError } from '../../kernel/errors.js';
import {
  activeAgentsInCreationOrder,
  readSearchChange,
  readSearchRow,
  readSearchRows,
  type CreationOrderRow,
} from '../search/agent-search-store.js';
import { readChangeHead } from '../agents/change-feed-store.js';
import type { SearchPage, SearchService } from '../search/search.js';
import {
  A2A_CARD_TYPE,
  ARD_BASE,
  CATALOG_SPEC_VERSION,
  CATALOG_TYPE,
  agentEntry,
  referral,
  MCP_SERVER_CARD_TYPE,
  registryEntry,
  type ArdSite,
} from './entries.js';
import { decodePageToken, encodePageToken, requestDigest, type PageKind } from './page-token.js';
import type { ArdExploreRequest, ArdListQuery, ArdSearchRequest } from './schemas.js';
import { narrow, relevanceScore } from './ard-query.js';
import { exploreFacets } from './ard-facets.js';
import { parseListFilter, type ListFilter } from './list-filter.js';
import { urnToDid } from './urn.js';

export const CATALOG_PAGE_SIZE = 100;
/** Agents a filtered GET /agents request examines at most (a range of one index, a few columns each). */
export const LIST_SCAN_ROWS = 2000;
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

export interface ArdServiceDeps {
  search: SearchService;
  db: Db;
  site: ArdSite;
  didWebDomain: string;
  /** Other registries' ARD API bases, answered as referrals (ARD_REFERRALS). */
  referrals: readonly string[];
  /** Verified domains of agents (modules/domains/), for entries read outside a search page. */
  domainsOf?: (dids: readonly string[]) => Promise<ReadonlyMap<string, readonly string[]>>;
}

const NO_DOMAINS: ReadonlyMap<string, readonly string[]> = new Map();

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
  private entryJson(
    row: AgentSearchRow,
    domains: ReadonlyMap<string, readonly string[]>,
    cache: ByteBoundedCache<KeptEntry> = this.entries,
  ): string {
    // A domain claimed or dropped stamps the agent: its change number moves and the entry is rendered again.
    const changeSeq = changeOf(row);
    const cached = cache.get(row.did);
    if (cached !== undefined && cached.changeSeq === changeSeq) return cached.json;
    const json = JSON.stringify(agentEntry(row, this.deps.site, domains.get(row.did)));
    if (changeSeq === undefined) cache.delete(row.did);
    // Entries are ASCII but for names and descriptions: about a byte a character, and the key.
    else cache.set(row.did, { changeSeq, json }, json.length + row.did.length + 96);
    return json;
  }

  /** Entries' JSON texts as one array. */
  private entriesJson(
    rows: readonly AgentSearchRow[],
    domains: ReadonlyMap<string, readonly string[]>,
  ): string {
    return `[${rows.map((row) => this.entryJson(row, domains)).join(',')}]`;
  }

  private async domainsOf(dids: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>> {
    return dids.length === 0 || this.deps.domainsOf === undefined ? NO_DOMAINS : this.deps.domainsOf(dids);
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
      const entry = this.entryJson(row, page.domains);
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
    return this.entryJson(row, await this.domainsOf([did]), this.published);
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
    return `{"items":${this.entriesJson(rows, page.domains)},"total":${page.total}${token}}`;
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
    return `{"items":${this.entriesJson(rows, await this.domainsOf(matched))}${token}}`;
  }

  /** One page of the published catalog: a bounded ai-catalog document chained to the next page. */
  async catalogPage(pageToken: string | undefined): Promise<string> {
    const { rows, page, pageToken: next, first } = await this.listed('catalog', CATALOG_PAGE_SIZE, pageToken);
    const entries = rows.map((row) => this.entryJson(row, page.domains));
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
        {
          identifier: `urn:air:${this.deps.site.publisher}:mcp:agent-registry`,
          displayName: 'Agent Registry: MCP server',
          type: MCP_SERVER_CARD_TYPE,
          url: `${this.deps.site.publicUrl}/mcp/server-card`,
          description: 'The MCP Server Card of the registry: find, invoke and review agents over MCP',
          tags: ['mcp'],
        },
      ],
    };
  }

  explore(body: ArdExploreRequest): Promise<Record<string, unknown>> {
    return exploreFacets(this.deps.search, this.deps.site.publisher, body);
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
