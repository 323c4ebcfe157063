import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from '../connect.js';
import * as core from './001-core.js';
import * as tasks from './002-tasks.js';
import * as discovery from './003-discovery.js';
import * as searchActiveOnly from './004-search-active-only.js';
import * as usedSignatures from './005-used-signatures.js';
import * as invocationIdempotency from './006-invocation-idempotency.js';
import * as trust from './007-trust.js';
import * as changeFeed from './008-change-feed.js';
import * as searchInMemory from './009-search-in-memory.js';
import * as pendingTasksIndex from './010-pending-tasks-index.js';
import * as taskBounds from './011-task-bounds.js';

/** Explicit, ordered list: a migration is never discovered from the file system at run time. */
const migrations: Record<string, Migration> = {
  '001-core': core,
  '002-tasks': tasks,
  '003-discovery': discovery,
  '004-search-active-only': searchActiveOnly,
  '005-used-signatures': usedSignatures,
  '006-invocation-idempotency': invocationIdempotency,
  '007-trust': trust,
  '008-change-feed': changeFeed,
  '009-search-in-memory': searchInMemory,
  '010-pending-tasks-index': pendingTasksIndex,
  '011-task-bounds': taskBounds,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    throw new Error(`Database migration failed: ${reason}`, { cause: error });
  }
}
