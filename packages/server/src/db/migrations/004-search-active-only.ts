import type { Kysely } from 'kysely';
import type { Db } from '../connect.js';
import { sweepInactiveFromIndex } from '../stores/agent-index.js';

// The search index now holds active agents only (docs/decisions.md, "Search"): take out the agents
// deactivated before this migration. New deactivations remove their agent in the same transaction.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sweepInactiveFromIndex(db as unknown as Db, { stamp: false });
}
