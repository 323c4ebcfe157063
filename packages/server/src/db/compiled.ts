import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './connect.js';
import { directReaderOf } from './direct-reads.js';
import { prepareOnce } from './prepared-statements.js';

/**
 * Builds and compiles a query once per database handle (and its transactions). Keyed by the handle's
 * dialect adapter, which its transactions share: a transaction is a new Kysely object each time.
 */
function compiler<Row, Args extends readonly unknown[]>(
  build: (db: Db, ...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): (db: Db) => CompiledQuery<Row> {
  const compiled = new WeakMap<object, CompiledQuery<Row>>();
  return (db) => {
    const adapter = db.getExecutor().adapter;
    const known = compiled.get(adapter);
    if (known !== undefined) return known;
    const query = build(db, ...placeholders).compile();
    // The parameters must be exactly the placeholders, in order, or the values would land elsewhere.
    if (
      query.parameters.length !== placeholders.length ||
      query.parameters.some((value, index) => value !== placeholders[index])
    ) {
      throw new Error(`compiledOnce: the query's parameters are not its placeholders (${query.sql})`);
    }
    prepareOnce(query.sql);
    compiled.set(adapter, query);
    return query;
  };
}

/**
 * A hot query built and compiled once per database handle (and its transactions), then run with new parameter
 * values: building and compiling cost about as much as a primary-key lookup (docs/decisions/performance.md,
 * "Compiled queries"). `build` receives the placeholders to use as values, in the order the parameters are
 * given. On SQLite, a read runs straight on the connection when no transaction holds it (db/direct-reads.ts).
 */
export function compiledOnce<Row, Args extends readonly unknown[]>(
  build: (db: Db, ...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): CompiledRead<Row, Args> {
  const compile = compiler(build, placeholders);
  const run = async (db: Db, ...parameters: Args): Promise<Row[]> => {
    const query = compile(db);
    const direct = directReaderOf(db)?.read<Row>(query.sql, parameters);
    if (direct !== undefined) return direct;
    return (await db.executeQuery<Row>({ ...query, parameters })).rows;
  };
  return Object.assign(run, { sqlFor: (db: Db) => compile(db).sql });
}

/** A compiled read; `sqlFor` gives its statement's text (for query-plan tests). */
export type CompiledRead<Row, Args extends readonly unknown[]> = ((
  db: Db,
  ...parameters: Args
) => Promise<Row[]>) & { sqlFor(db: Db): string };

/** compiledOnce for a write (no RETURNING): answers how many rows it changed. */
export function compiledWrite<Args extends readonly unknown[]>(
  build: (db: Db, ...placeholders: Args) => Compilable<unknown>,
  placeholders: Args,
): (db: Db, ...parameters: Args) => Promise<number> {
  const compile = compiler(build, placeholders);
  return async (db, ...parameters) => {
    const result: QueryResult<unknown> = await db.executeQuery({ ...compile(db), parameters });
    return Number(result.numAffectedRows ?? 0n);
  };
}

/** compiledOnce for a write with RETURNING: always through Kysely's driver, never the direct reader. */
export function compiledWriteReturning<Row, Args extends readonly unknown[]>(
  build: (db: Db, ...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): (db: Db, ...parameters: Args) => Promise<Row[]> {
  const compile = compiler(build, placeholders);
  return async (db, ...parameters) => (await db.executeQuery<Row>({ ...compile(db), parameters })).rows;
}

/** Placeholders for `compiledOnce`/`compiledWrite`: one distinct marker per named parameter. */
export const placeholdersFor = (names: readonly string[]): unknown[] => names.map((name) => `\u0000${name}`);
