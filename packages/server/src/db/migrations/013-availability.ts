import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_presence')
    .addColumn('did', 'text', (col) => col.primaryKey())
    .addColumn('first_seen_at', 'bigint', (col) => col.notNull())
    .addColumn('last_seen_at', 'bigint', (col) => col.notNull())
    .addColumn('online_since', 'bigint', (col) => col.notNull())
    .addColumn('checked_at', 'bigint', (col) => col.notNull())
    .execute();
  // Search's available=true reads the agents seen within the online window.
  await db.schema
    .createIndex('agent_presence_last_seen_idx')
    .on('agent_presence')
    .column('last_seen_at')
    .execute();
  await db.schema
    .createTable('agent_presence_slots')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('slot', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('agent_presence_slots_pk', ['did', 'slot'])
    .execute();
  // Slots older than the longest uptime window are deleted by age.
  await db.schema
    .createIndex('agent_presence_slots_slot_idx')
    .on('agent_presence_slots')
    .column('slot')
    .execute();
}
