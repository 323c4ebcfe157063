import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What the latest read of a mirrored agent's home API found: availability and a service record summary
  // (docs/federation.md, "What the home reports"); null for imported entries and before the first read.
  await db.schema.alterTable('entry_probes').addColumn('home_live', 'text').execute();
}
