import type { Kysely } from 'kysely';

/**
 * Keys that rotate and recover (docs/identity.md): the agent's key generation (tokens name it, so a
 * rotation ends every token of the old key at once), the keys an agent has given up (never usable to
 * register or rotate again) and each agent's recovery key with its pending recovery.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('agents')
    .addColumn('key_generation', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('retired_keys')
    .addColumn('key_id', 'text', (col) => col.primaryKey())
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('key_type', 'text', (col) => col.notNull())
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('retired_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('key_recovery')
    .addColumn('did', 'text', (col) => col.primaryKey())
    .addColumn('recovery_key_type', 'text', (col) => col.notNull())
    .addColumn('recovery_public_key', 'text', (col) => col.notNull())
    .addColumn('recovery_key_id', 'text', (col) => col.notNull())
    .addColumn('set_at', 'bigint', (col) => col.notNull())
    .addColumn('pending_key_type', 'text')
    .addColumn('pending_public_key', 'text')
    .addColumn('pending_key_id', 'text')
    .addColumn('pending_started_at', 'bigint')
    .addColumn('pending_due_at', 'bigint')
    .execute();
  // The sweep finds due recoveries by this.
  await db.schema.createIndex('key_recovery_due_idx').on('key_recovery').column('pending_due_at').execute();
}
