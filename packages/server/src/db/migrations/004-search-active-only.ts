import type { Kysely } from 'kysely';

// Took deactivated agents out of the SQL search tables until migration 009 dropped them: a database
// migrating now reaches 009 in the same run, so there is nothing to do.
export async function up(_db: Kysely<unknown>): Promise<void> {
  // Kept in the list so that databases that ran it and those that did not agree on the history.
}
