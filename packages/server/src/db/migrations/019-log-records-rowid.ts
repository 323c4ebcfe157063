import { sql, type Kysely } from 'kysely';
import { sqlDialect } from '../dialect.js';

/**
 * SQLite: `log_records.seq` becomes the table's rowid (INTEGER PRIMARY KEY). Declared `bigint primary key`,
 * it was a second B-tree beside the rowid's, written by every logged change
 * (docs/decisions/transparency-log.md, "Records are written by the stamp; leaves are derived from them"). The
 * rows are copied as they are, in one transaction with the rename, so the log reads the same before and
 * after. PostgreSQL's bigint key is its one index already: nothing to change there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (sqlDialect(db) !== 'sqlite') return;
  await sql`create table log_records_by_rowid (
    seq integer primary key,
    operation text not null,
    record text not null
  )`.execute(db);
  await sql`insert into log_records_by_rowid (seq, operation, record)
    select seq, operation, record from log_records order by seq`.execute(db);
  await sql`drop table log_records`.execute(db);
  await sql`alter table log_records_by_rowid rename to log_records`.execute(db);
}
