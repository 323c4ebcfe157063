import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import type { Db } from './connect.js';
import { sqlDialect } from './dialect.js';

/**
 * Full-text search is the one dialect-specific part of discovery, and it lives only here.
 * SQLite: an FTS5 table (porter stemming, diacritics folded, contentless) keyed by the integer ids of
 * `agents_fts_ids`, ranked by bm25 with column weights. PostgreSQL: a weighted tsvector per agent
 * (`english` stemming) with a GIN index, ranked by ts_rank. Both: every term must match, the last
 * one also as a prefix.
 */

export interface FullTextDocument {
  name: string;
  description: string;
  /** Capability types and descriptions. */
  capabilities: string;
  /** Agent tags and capability tags. */
  tags: string;
}

export interface FullTextMatch {
  did: string;
  /** Lower is more relevant. */
  rank: number;
}

/** bm25 weights of name, description, capabilities, tags: a hit in the name counts most. */
const COLUMN_WEIGHTS = sql.raw('10.0, 2.0, 5.0, 5.0');

/** Words of a query: letters and digits, lower-cased; punctuation and FTS operators never reach SQL. */
export function fullTextTerms(query: string): string[] {
  const words =
    query
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
  return [...new Set(words)];
}

/** Replaces the agent's document in the full-text index; call inside the transaction that writes the agent. */
export async function writeFullTextDocument(db: Db, did: string, document: FullTextDocument): Promise<void> {
  if (sqlDialect(db) === 'postgres') {
    await sql`insert into agents_fts (did, document) values (${did},
        setweight(to_tsvector('english', ${foldDiacritics(document.name)}), 'A') ||
        setweight(to_tsvector('english', ${foldDiacritics(document.capabilities)}), 'B') ||
        setweight(to_tsvector('english', ${foldDiacritics(document.tags)}), 'B') ||
        setweight(to_tsvector('english', ${foldDiacritics(document.description)}), 'C'))
      on conflict (did) do update set document = excluded.document`.execute(db);
    return;
  }
  await sql`insert into agents_fts_ids (did) values (${did}) on conflict (did) do nothing`.execute(db);
  const row = await sql<{ id: number }>`select id from agents_fts_ids where did = ${did}`.execute(db);
  const id = row.rows[0]?.id;
  if (id === undefined) throw new Error(`full-text id for ${did} vanished`);
  await sql`delete from agents_fts where rowid = ${id}`.execute(db);
  await sql`insert into agents_fts (rowid, name, description, capabilities, tags)
    values (${id}, ${document.name}, ${document.description}, ${document.capabilities}, ${document.tags})`.execute(
    db,
  );
}

/** A subquery of the DIDs whose document contains every term, for `agents.did in (...)`. */
export function fullTextDids(db: Db, terms: readonly string[]): RawBuilder<string> {
  if (sqlDialect(db) === 'postgres') {
    return sql<string>`(select did from agents_fts where document @@ to_tsquery('english', ${tsQuery(terms)}))`;
  }
  return sql<string>`(select agents_fts_ids.did from agents_fts
    join agents_fts_ids on agents_fts_ids.id = agents_fts.rowid
    where agents_fts match ${matchExpression(terms)})`;
}

/**
 * A derived table `fts(did, rank)` of the same agents with their relevance, to join on agents.did.
 * `limit -1` keeps SQLite from flattening it into the outer query, where it would otherwise probe the
 * FTS id table once per value of an IN filter (minutes at 100,000 agents instead of milliseconds).
 */
export function fullTextMatches(db: Db, terms: readonly string[]): AliasedRawBuilder<FullTextMatch, 'fts'> {
  if (sqlDialect(db) === 'postgres') {
    // ts_rank grows with relevance; negate it so that, as with bm25, lower ranks first.
    return sql<FullTextMatch>`(select did, -ts_rank(document, query) as rank
      from agents_fts, to_tsquery('english', ${tsQuery(terms)}) as query
      where document @@ query)`.as('fts');
  }
  return sql<FullTextMatch>`(select agents_fts_ids.did as did, bm25(agents_fts, ${COLUMN_WEIGHTS}) as rank
    from agents_fts join agents_fts_ids on agents_fts_ids.id = agents_fts.rowid
    where agents_fts match ${matchExpression(terms)} limit -1)`.as('fts');
}

/** PostgreSQL form of the same query: `a & b & c:*`. Terms are letters and digits only. */
function tsQuery(terms: readonly string[]): string {
  return terms
    .map((term) => foldDiacritics(term))
    .map((term, index) => (index === terms.length - 1 ? `${term}:*` : term))
    .join(' & ');
}

/** "Crème" -> "Creme": what FTS5's remove_diacritics does, without PostgreSQL's unaccent extension. */
function foldDiacritics(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '');
}

/** Every term must match; the last one also as a prefix. Terms are letters and digits only. */
function matchExpression(terms: readonly string[]): string {
  return terms.map((term, index) => `"${term}"${index === terms.length - 1 ? '*' : ''}`).join(' ');
}
