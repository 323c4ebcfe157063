import type { Kysely } from 'kysely';

/**
 * When an agent's worker last said it was stopping (docs/availability.md): later than the last
 * evidence, the agent reads offline at once instead of after the online window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agent_presence').addColumn('stopped_at', 'bigint').execute();
}
