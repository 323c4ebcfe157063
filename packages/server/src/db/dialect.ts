import { PostgresAdapter, SqliteAdapter, type DialectAdapter } from 'kysely';

export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Which SQL dialect a Kysely instance speaks, read from its adapter, so migrations and the few
 * dialect-specific stores (the change-feed stamp) need no extra parameter.
 */
export function sqlDialect(db: { getExecutor(): { readonly adapter: DialectAdapter } }): SqlDialect {
  const { adapter } = db.getExecutor();
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  if (adapter instanceof PostgresAdapter) return 'postgres';
  throw new Error(`Unsupported database adapter ${adapter.constructor.name}`);
}
