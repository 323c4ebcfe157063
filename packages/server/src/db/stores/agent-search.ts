import type { SelectQueryBuilder } from 'kysely';
import type { Db } from '../connect.js';
import { fullTextMatches, type FullTextMatch } from '../full-text.js';
import type { AgentsTable, DatabaseSchema } from '../schema/index.js';

export type SearchSort = 'relevance' | 'reputation' | 'created_at';
export type SearchOrder = 'asc' | 'desc';

export interface AgentSearchFilter {
  /** Full-text terms (see db/full-text.ts); every term must match. */
  terms?: readonly string[];
  /** Capability type, already in search-key form. */
  capability?: string;
  /** Any of these tags, already in search-key form. */
  tags?: readonly string[];
  minReputation?: number;
  sort: SearchSort;
  order: SearchOrder;
  limit: number;
  offset: number;
}

export type AgentSearchRow = Pick<
  AgentsTable,
  | 'did'
  | 'name'
  | 'description'
  | 'capabilities'
  | 'tags'
  | 'reputation_score'
  | 'average_rating'
  | 'total_reviews'
  | 'created_at'
  | 'status'
>;

type SearchScope = SelectQueryBuilder<DatabaseSchema & { fts: FullTextMatch }, 'agents' | 'fts', object>;

/**
 * Active agents matching every given filter, one page in the requested order plus the exact total,
 * read in one transaction. Filters use the side tables' (value, did) indexes; the sorts use the
 * agents (status, reputation_score, created_at, did) and (status, created_at) indexes.
 */
export async function searchAgents(
  db: Db,
  filter: AgentSearchFilter,
): Promise<{ rows: AgentSearchRow[]; total: number }> {
  return db.transaction().execute(async (trx) => {
    // Without terms there is no `fts` table in scope, and nothing below refers to it then.
    let query: SearchScope =
      filter.terms === undefined
        ? (trx.selectFrom('agents') as unknown as SearchScope)
        : trx.selectFrom('agents').innerJoin(fullTextMatches(trx, filter.terms), 'fts.did', 'agents.did');
    query = query.where('agents.status', '=', 'active');
    if (filter.capability !== undefined) {
      const capability = filter.capability;
      query = query.where('agents.did', 'in', (eb) =>
        eb.selectFrom('agent_capabilities').select('agent_capabilities.did').where('type', '=', capability),
      );
    }
    if (filter.tags !== undefined) {
      const tags = [...filter.tags];
      query = query.where('agents.did', 'in', (eb) =>
        eb.selectFrom('agent_tags').select('agent_tags.did').where('tag', 'in', tags),
      );
    }
    if (filter.minReputation !== undefined) {
      query = query.where('agents.reputation_score', '>=', filter.minReputation);
    }

    const { total } = await query
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();

    let page = query.select([
      'agents.did',
      'agents.name',
      'agents.description',
      'agents.capabilities',
      'agents.tags',
      'agents.reputation_score',
      'agents.average_rating',
      'agents.total_reviews',
      'agents.created_at',
      'agents.status',
    ]);
    const { order } = filter;
    if (filter.sort === 'relevance') {
      // bm25 is lower for better matches: "desc" (most relevant first) is ascending rank.
      page = page
        .orderBy('fts.rank', order === 'desc' ? 'asc' : 'desc')
        .orderBy('agents.reputation_score', 'desc')
        .orderBy('agents.did', 'asc');
    } else if (filter.sort === 'reputation') {
      page = page
        .orderBy('agents.reputation_score', order)
        .orderBy('agents.created_at', order)
        .orderBy('agents.did', order);
    } else {
      page = page.orderBy('agents.created_at', order).orderBy('agents.did', order);
    }
    const rows = await page.limit(filter.limit).offset(filter.offset).execute();
    return { rows, total: Number(total) };
  });
}
