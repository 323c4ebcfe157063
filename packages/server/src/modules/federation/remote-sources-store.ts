import type { Selectable } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { RemoteSourcesTable } from '../../db/schema/index.js';
import { importedText } from './listing-limits.js';

/** A federation source (an imported card or registry, or a followed peer) and its status. */
export type RemoteSourceRow = Selectable<RemoteSourcesTable>;

/** Records a configured source once; an existing row (and its cursor) is kept. */
export async function ensureSource(
  db: Db,
  source: Pick<RemoteSourceRow, 'id' | 'kind' | 'url'>,
): Promise<void> {
  await db
    .insertInto('remote_sources')
    .values({
      ...source,
      state: 'ok',
      last_error: null,
      last_attempt_at: null,
      last_success_at: null,
      cursor: null,
    })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute();
}

export async function readSources(db: Db): Promise<RemoteSourceRow[]> {
  return db.selectFrom('remote_sources').selectAll().orderBy('id').execute();
}

export async function readSource(db: Db, id: string): Promise<RemoteSourceRow | undefined> {
  return db.selectFrom('remote_sources').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Updates a source's status; its last error may quote what the remote side sent, so it is cleaned. */
export async function updateSource(
  db: Db,
  id: string,
  patch: Partial<Omit<RemoteSourceRow, 'id' | 'kind' | 'url'>>,
): Promise<void> {
  const error =
    typeof patch.last_error === 'string' ? { last_error: importedText(patch.last_error, true) } : {};
  await db
    .updateTable('remote_sources')
    .set({ ...patch, ...error })
    .where('id', '=', id)
    .execute();
}

/** Remote entries stored (listed or not), by the kind of source they came from: for the metrics. */
export async function countEntriesByKind(
  db: Db,
): Promise<Partial<Record<RemoteSourcesTable['kind'], number>>> {
  const rows = await db
    .selectFrom('remote_entries')
    .innerJoin('remote_sources', 'remote_sources.id', 'remote_entries.source_id')
    .select(['remote_sources.kind', db.fn.countAll<number | string>().as('entries')])
    .groupBy('remote_sources.kind')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.kind, Number(row.entries)]));
}
