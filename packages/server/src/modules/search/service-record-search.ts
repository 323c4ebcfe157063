import type { Db } from '../../db/connect.js';
import {
  agentsByServiceRecord,
  type SearchOrder,
  type SearchSort,
  type ServiceRecordSort,
} from './agent-search-store.js';
import type { IndexFilters, IndexSort, SearchIndex } from '@agent-registry/search-index';

export interface ServiceRecordQuery {
  /** What the search index answers: words, capability, tags, minimum reputation. */
  filters: IndexFilters;
  minSuccessRate?: number;
  activeSince?: number;
  sort: SearchSort;
  order: SearchOrder;
  limit: number;
  offset: number;
}

const isRecordSort = (sort: SearchSort): sort is ServiceRecordSort =>
  sort === 'success_rate' || sort === 'latency';

/**
 * A search on the measured service record (`min_success_rate`, `active_within_days`, `sort=success_rate`
 * or `latency`), which the search index does not hold (it moves with every completed call): the index
 * answers the words, capability, tags and minimum reputation, the database the record, and the two
 * sets meet here by DID. The database's part is read through indexes holding only agents that have a
 * record, so a search costs what the record holds. Pages by position, as `offset` or a cursor says.
 */
export async function searchServiceRecord(
  db: Db,
  index: SearchIndex,
  query: ServiceRecordQuery,
): Promise<{ dids: string[]; total: number }> {
  const { filters, sort, offset, limit, order } = query;
  const end = offset + limit;
  const recordSort = isRecordSort(sort) ? { sort, order } : undefined;
  const measured = await agentsByServiceRecord(db, {
    minSuccessRate: query.minSuccessRate,
    activeSince: query.activeSince,
    sort: recordSort,
  });

  if (query.minSuccessRate !== undefined || query.activeSince !== undefined) {
    // Every match passes the record's filters, so every match is in `measured`.
    // sort=availability never comes here (the search service refuses it with record filters).
    const indexSort = isRecordSort(sort) ? undefined : { sort: sort as IndexSort, order };
    const matches = index.keepMatching(filters, measured, indexSort);
    return { dids: matches.slice(offset, end), total: matches.length };
  }

  // Sorted on the record, no filter on it: the agents with calls in the window first, in the record's
  // order; every other match has no value and no calls (equal keys), so they follow in DID order.
  const first = index.keepMatching(filters, measured);
  const dids = first.slice(offset, end);
  if (dids.length < limit && end > first.length) {
    const rest = index.firstMatchingByDid(filters, end - first.length, new Set(first));
    dids.push(...rest.slice(Math.max(0, offset - first.length)));
  }
  return { dids, total: index.count(filters) };
}
