import type { Kysely } from 'kysely';

/**
 * Domains and handles (docs/identity.md): the domains an agent has proven it holds, with when each was
 * last checked and how many checks in a row have failed since, and the readable handle an agent took
 * under one of them (unique in the registry).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_domains')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('domain', 'text', (col) => col.notNull())
    .addColumn('method', 'text', (col) => col.notNull())
    .addColumn('verified_at', 'bigint', (col) => col.notNull())
    .addColumn('checked_at', 'bigint', (col) => col.notNull())
    .addColumn('failed_checks', 'integer', (col) => col.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('agent_domains_pk', ['did', 'domain'])
    .execute();
  // The domain= search filter finds holders by this; the re-check finds due claims by the other.
  await db.schema.createIndex('agent_domains_domain_idx').on('agent_domains').column('domain').execute();
  await db.schema.createIndex('agent_domains_checked_idx').on('agent_domains').column('checked_at').execute();
  await db.schema
    .createTable('agent_handles')
    .addColumn('handle', 'text', (col) => col.primaryKey())
    .addColumn('did', 'text', (col) => col.notNull().unique())
    .addColumn('domain', 'text', (col) => col.notNull())
    .addColumn('set_at', 'bigint', (col) => col.notNull())
    .execute();
}
