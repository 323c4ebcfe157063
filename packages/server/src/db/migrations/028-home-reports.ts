import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A mirrored entry's reputation, rating and review count as its home's verified log carried them
  // (docs/federation.md, "What the home reports"); null for imported entries.
  await db.schema.alterTable('remote_entries').addColumn('home_report', 'text').execute();
}
