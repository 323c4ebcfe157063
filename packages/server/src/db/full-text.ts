import { sql, type RawBuilder } from 'kysely';
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

/** bm25 weights of name, description, capabilities, tags: a hit in the name counts most. */
const COLUMN_WEIGHTS = sql.raw('10.0, 2.0, 5.0, 5.0');

/**
 * Words of a query: letters and digits, lower-cased; punctuation and FTS operators never reach SQL.
 * A word that is nothing once diacritics are folded (combining marks alone) is dropped: it would
 * make an empty tsquery term on PostgreSQL and can match nothing on SQLite.
 */
export function fullTextTerms(query: string): string[] {
  const words =
    query
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
  return [...new Set(words)].filter((word) => foldDiacritics(word) !== '');
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

/** Removes the agent's document from the full-text index; call inside the transaction that deactivates it. */
export async function deleteFullTextDocument(db: Db, did: string): Promise<void> {
  if (sqlDialect(db) === 'postgres') {
    await sql`delete from agents_fts where did = ${did}`.execute(db);
    return;
  }
  const row = await sql<{ id: number }>`select id from agents_fts_ids where did = ${did}`.execute(db);
  const id = row.rows[0]?.id;
  if (id === undefined) return;
  await sql`delete from agents_fts where rowid = ${id}`.execute(db);
  await sql`delete from agents_fts_ids where id = ${id}`.execute(db);
}

/**
 * The agents whose document contains every term, as pieces of a query: `from` (tables), `match` (the
 * condition), `did` and `rank` (lower is more relevant) expressions. Callers add their own conditions
 * on `did`; the index holds active agents only, so no status check is needed.
 */
export interface FullTextSource {
  from: RawBuilder<unknown>;
  match: RawBuilder<boolean>;
  did: RawBuilder<string>;
  rank: RawBuilder<number>;
}

export function fullTextSource(db: Db, terms: readonly string[]): FullTextSource {
  if (sqlDialect(db) === 'postgres') {
    return {
      from: sql`agents_fts, to_tsquery('english', ${tsQuery(terms)}) as fts_query`,
      match: sql<boolean>`agents_fts.document @@ fts_query`,
      did: sql<string>`agents_fts.did`,
      // ts_rank grows with relevance; negate it so that, as with bm25, lower ranks first.
      rank: sql<number>`-ts_rank(agents_fts.document, fts_query)`,
    };
  }
  return {
    from: sql`agents_fts join agents_fts_ids on agents_fts_ids.id = agents_fts.rowid`,
    match: sql<boolean>`agents_fts match ${matchExpression(terms)}`,
    did: sql<string>`agents_fts_ids.did`,
    rank: sql<number>`bm25(agents_fts, ${COLUMN_WEIGHTS})`,
  };
}

/**
 * The `count` most relevant matches (most relevant first when `bestFirst`) as a derived table
 * `ranked(did, score)`, lower scores more relevant. The index scores every match but keeps only the
 * best `count` (a bounded heap, not a sort of every match); `count` -1 keeps them all. SQLite: ranked
 * by rowid and bm25 in the FTS table alone, DIDs looked up for the kept rows only.
 */
export function topMatches(
  db: Db,
  terms: readonly string[],
  bestFirst: boolean,
  count: number,
): RawBuilder<unknown> {
  const direction = bestFirst ? sql`asc` : sql`desc`;
  if (sqlDialect(db) === 'postgres') {
    const limit = count < 0 ? sql`` : sql`limit ${count}`;
    return sql`(select agents_fts.did as did, -ts_rank(agents_fts.document, fts_query) as score
      from agents_fts, to_tsquery('english', ${tsQuery(terms)}) as fts_query
      where agents_fts.document @@ fts_query order by score ${direction} ${limit}) as ranked`;
  }
  return sql`(select agents_fts_ids.did as did, best.score as score
    from (select rowid as doc, bm25(agents_fts, ${COLUMN_WEIGHTS}) as score from agents_fts
      where agents_fts match ${matchExpression(terms)} order by score ${direction} limit ${count}) as best
    cross join agents_fts_ids on agents_fts_ids.id = best.doc) as ranked`;
}

/** How many agents contain every term, counted in the index alone. */
export async function countFullTextMatches(db: Db, terms: readonly string[]): Promise<number> {
  const query =
    sqlDialect(db) === 'postgres'
      ? sql<{ count: number }>`select count(*) as count from agents_fts
          where document @@ to_tsquery('english', ${tsQuery(terms)})`
      : sql<{ count: number }>`select count(*) as count from agents_fts
          where agents_fts match ${matchExpression(terms)}`;
  const { rows } = await query.execute(db);
  return Number(rows[0]?.count ?? 0);
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
