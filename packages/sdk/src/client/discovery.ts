import type { SearchOrder, SearchSort } from '@agent-registry/protocol';
import type {
  AgentChange,
  ChainInfo,
  ChainList,
  ChangePage,
  DidDocument,
  Jwks,
  ObservationsPage,
  ObservationsQuery,
  Readiness,
  RemoteEntriesPage,
  RemoteEntriesQuery,
  RemoteEntry,
  SearchQuery,
  SearchResponse,
  Stats,
} from '../types.js';
import { enc, type Transport } from './transport.js';

export interface SearchOptions {
  q?: string;
  capability?: string;
  tags?: string[];
  minReputation?: number;
  /** Lowest 30-day success rate (0-1) the registry measured; unmeasured agents are left out. */
  minSuccessRate?: number;
  /** Only agents that completed a brokered call within this many days. */
  activeWithinDays?: number;
  /** true: only agents whose availability is online now (docs/availability.md). */
  available?: boolean;
  /**
   * `federated` also searches the read-only entries of agents that live elsewhere (mirrored from
   * peer registries, imported from A2A cards and MCP Registries); `local`, the default, only this
   * registry's own agents. Each hit's `home_registry` and `provenance` say which it is.
   */
  scope?: SearchQuery['scope'];
  limit?: number;
  offset?: number;
  /** `next_cursor` of the previous page of the same search, instead of `offset`. */
  cursor?: string;
  sort?: SearchSort;
  order?: SearchOrder;
}

export function search(transport: Transport, options: SearchOptions): Promise<SearchResponse> {
  return transport.request('GET', '/api/agents/search', {
    query: {
      q: options.q,
      capability: options.capability,
      tags: options.tags === undefined || options.tags.length === 0 ? undefined : options.tags.join(','),
      min_reputation: options.minReputation,
      min_success_rate: options.minSuccessRate,
      active_within_days: options.activeWithinDays,
      available: options.available === undefined ? undefined : String(options.available),
      scope: options.scope,
      limit: options.limit,
      offset: options.offset,
      cursor: options.cursor,
      sort: options.sort,
      order: options.order,
    },
  });
}

export async function* searchAll(
  transport: Transport,
  options: Omit<SearchOptions, 'offset' | 'cursor'>,
): AsyncGenerator<SearchResponse['agents'][number]> {
  let cursor: string | undefined;
  for (;;) {
    const page = await search(transport, { ...options, cursor });
    yield* page.agents;
    if (page.next_cursor === null || page.next_cursor === undefined) return;
    cursor = page.next_cursor;
  }
}

export function changes(
  transport: Transport,
  options: { since?: string; limit?: number },
): Promise<ChangePage> {
  return transport.request('GET', '/api/agents/changes', {
    query: { since: options.since, limit: options.limit },
  });
}

export async function* followChanges(
  transport: Transport,
  options: { since?: string; limit?: number; onCursor?: (cursor: string) => void },
): AsyncGenerator<AgentChange> {
  let since = options.since;
  for (;;) {
    const page = await changes(transport, { since, limit: options.limit });
    yield* page.changes;
    since = page.next_cursor;
    options.onCursor?.(since);
    if (!page.has_more) return;
  }
}

export function listRemoteEntries(
  transport: Transport,
  filters: RemoteEntriesQuery,
): Promise<RemoteEntriesPage> {
  return transport.request('GET', '/api/federation/entries', { query: { ...filters } });
}

export function getRemoteEntry(transport: Transport, id: string): Promise<RemoteEntry> {
  return transport.request('GET', `/api/federation/entries/${enc(id)}`);
}

export function listObservations(
  transport: Transport,
  id: string,
  query: ObservationsQuery,
): Promise<ObservationsPage> {
  return transport.request('GET', `/api/federation/entries/${enc(id)}/observations`, { query: { ...query } });
}

export function resolveDid(transport: Transport, did: string): Promise<DidDocument> {
  return transport.request('GET', `/api/did/${enc(did)}`);
}

export function listChains(transport: Transport): Promise<ChainList> {
  return transport.request('GET', '/api/chains');
}

export function getChain(transport: Transport, chainId: string): Promise<ChainInfo> {
  return transport.request('GET', `/api/chains/${enc(chainId)}`);
}

export function getStats(transport: Transport): Promise<Stats> {
  return transport.request('GET', '/api/stats');
}

export function getJwks(transport: Transport): Promise<Jwks> {
  return transport.request('GET', '/.well-known/jwks.json');
}

export function health(transport: Transport): Promise<Readiness> {
  return transport.request('GET', '/readyz');
}
