import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './connect.js';
import { directReaderOf } from './direct-reads.js';

/**
 * A hot query built and compiled once per database handle (and its transactions), then run with new
 * parameter values:
 * Kysely's builder and compiler cost about as much as the primary-key lookup itself (bench/RESULTS.md).
 * `build` receives the placeholders to use as values, in the order the parameters are given. On SQLite,
 * a read runs straight on the connection when no transaction holds it (db/direct-reads.ts).
 */
export function compiledOnce<Row, Args extends readonly unknown[]>(
  build: (db: Db, ...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): (db: Db, ...parameters: Args) => Promise<Row[]> {
  // Keyed by the handle's dialect adapter, which its transactions share: a query compiled once per
  // database handle serves every transaction on it too (a transaction is a new Kysely object each time).
  const compiled = new WeakMap<object, CompiledQuery<Row>>();
  const compile = (db: Db): CompiledQuery<Row> => {
    const query = build(db, ...placeholders).compile();
    // The parameters must be exactly the placeholders, in order, or the values would land elsewhere.
    if (
      query.parameters.length !== placeholders.length ||
      query.parameters.some((value, index) => value !== placeholders[index])
    ) {
      throw new Error(`compiledOnce: the query's parameters are not its placeholders (${query.sql})`);
    }
    compiled.set(db.getExecutor().adapter, query);
    return query;
  };
  return async (db, ...parameters) => {
    const query = compiled.get(db.getExecutor().adapter) ?? compile(db);
    const direct = directReaderOf(db)?.read<Row>(query.sql, parameters);
    if (direct !== undefined) return direct;
    return (await db.executeQuery<Row>({ ...query, parameters })).rows;
  };
}
