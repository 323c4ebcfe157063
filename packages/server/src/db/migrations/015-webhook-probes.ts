import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An agent's opt-out of probes (1: probed, the default). Only webhook agents are probed.
  await db.schema
    .alterTable('agents')
    .addColumn('webhook_probes', 'integer', (col) => col.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createTable('webhook_probes')
    .addColumn('did', 'text', (col) => col.primaryKey())
    .addColumn('due_at', 'bigint', (col) => col.notNull())
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('last_probed_at', 'bigint')
    .addColumn('last_failed_at', 'bigint')
    .execute();
  // Each node claims the probes that are due, earliest first.
  await db.schema.createIndex('webhook_probes_due_idx').on('webhook_probes').column('due_at').execute();
}
