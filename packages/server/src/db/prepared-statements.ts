import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/** Statement names by SQL text: only the compiled queries of db/compiled.ts, a fixed set. */
const names = new Map<string, string>();

/** Marks a compiled query's text as one PostgreSQL should parse and plan once per connection. */
export function prepareOnce(text: string): void {
  if (!names.has(text)) names.set(text, `registry_${names.size}`);
}

/**
 * The pool Kysely uses on PostgreSQL, with one change: a compiled query runs as a named prepared statement,
 * so each connection parses and plans it once. Kysely sends every query unnamed, and PostgreSQL then plans it
 * anew each time, which can cost more than running it (docs/decisions/performance.md, "Prepared statements on
 * PostgreSQL"). Named statements need session pooling if PgBouncer sits in front (docs/operations.md).
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const query = (textOrCursor: unknown, values?: readonly unknown[]): unknown => {
      if (typeof textOrCursor === 'string') {
        const name = names.get(textOrCursor);
        const parameters = values === undefined ? [] : [...values];
        return name === undefined
          ? client.query(textOrCursor, parameters)
          : client.query({ name, text: textOrCursor, values: parameters });
      }
      return client.query(textOrCursor as pg.Submittable);
    };
    return { query: query as PostgresPoolClient['query'], release: () => client.release() };
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      // Kysely keeps its connection object per client: hand it the same wrapper every time.
      let wrapper = wrapped.get(client);
      if (wrapper === undefined) {
        wrapper = wrap(client);
        wrapped.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
