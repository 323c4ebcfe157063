import { CompiledQuery, sql } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import { sqlDialect } from '../../db/dialect.js';
import { prepareOnce } from '../../db/prepared-statements.js';
import { PROFILE_COLUMNS, type AgentRow } from './agents-store.js';

/** Moves the head one number on; the row stays locked (PostgreSQL) or written (SQLite) until commit. */
const ADVANCE_HEAD = CompiledQuery.raw('update change_feed_head set seq = seq + 1 where id = 1');

/**
 * What a stamped change was, as the transparency log records it: a registration, a profile or
 * invocation-settings update (a deactivation is an update whose record has status "deactivated"), or
 * a reputation change.
 */
export type LoggedOperation = 'register' | 'update' | 'reputation';

/**
 * The public profile columns as one JSON object, built by the database in the statement that logs them
 * (no round trip through JavaScript). SQLite's json_object writes a REAL with as many digits as it takes
 * to read back the same double, so the record round-trips like the row itself.
 */
const profileRecordJson = (dialect: 'postgres' | 'sqlite'): string => {
  const pairs = PROFILE_COLUMNS.map((column) => `'${column}', ${column}`).join(', ');
  return dialect === 'postgres' ? `json_build_object(${pairs})::text` : `json_object(${pairs})`;
};

/** PostgreSQL: moves the head, stamps the agent and logs its record, in one statement. */
const STAMP_AND_LOG_POSTGRES = CompiledQuery.raw(
  `with head as (update change_feed_head set seq = seq + 1 where id = 1 returning seq),
    stamped as (update agents set change_seq = head.seq from head where agents.did = $1 returning agents.*)
    insert into log_records (seq, operation, record)
      select change_seq, $2::text, ${profileRecordJson('postgres')} from stamped returning seq`,
);
// Parsed and planned once per connection (db/prepared-statements.ts): every write of an agent runs it.
prepareOnce(STAMP_AND_LOG_POSTGRES.sql);

/**
 * Gives the agent the next change sequence number and appends the change to the transparency log's
 * records. Call it as the last statement of the transaction that changed the agent: the head row stays
 * locked until commit, so numbers (and log records) commit in order.
 * PostgreSQL: one statement that moves the head, stamps the agent and logs it, taking the head's lock
 * last, so logging holds that lock no longer than the stamp did.
 * SQLite (one writer: a transaction's order is its commit order): the agent takes the head's next
 * number, then the head moves, then the record is logged, with no value carried back through JavaScript.
 */
export async function stampAgentChange(
  db: Db,
  did: string,
  operation: LoggedOperation = 'update',
): Promise<void> {
  if (sqlDialect(db) === 'postgres') {
    const { rows } = await db.executeQuery({ ...STAMP_AND_LOG_POSTGRES, parameters: [did, operation] });
    if (rows.length === 0) throw new Error(`no change_feed_head row (migration 008) or no agent ${did}`);
    return;
  }
  await stampFromHead(db, did);
  await advanceChangeHead(db);
  await logStampedChange(db, did, operation);
}

/** SQLite: the stamped agent's log record, written from its row in one statement. */
const LOG_STAMPED_SQLITE = CompiledQuery.raw(
  `insert into log_records (seq, operation, record)
    select change_seq, ?, ${profileRecordJson('sqlite')} from agents where did = ?`,
);

/**
 * SQLite: logs the agent's change under the number it was stamped with (the last step of a stamp; the
 * registration insert, which takes its number in the insert, calls it after advanceChangeHead).
 */
export async function logStampedChange(db: Db, did: string, operation: LoggedOperation): Promise<void> {
  const result = await db.executeQuery({ ...LOG_STAMPED_SQLITE, parameters: [operation, did] });
  if (!result.numAffectedRows) throw new Error(`no agent ${did} to log`);
}

const stampFromHead = compiledOnce(
  (db, did: string) =>
    db
      .updateTable('agents')
      .set({ change_seq: sql<number>`(select seq + 1 from change_feed_head where id = 1)` })
      .where('did', '=', did),
  ['\u0000did'] as const,
);

/**
 * The second half of a SQLite stamp, for a row that took `seq + 1` of the head in its own insert or
 * update (insertRegisteredAgent): moves the head past it. Without the row, the number is skipped.
 */
export async function advanceChangeHead(db: Db): Promise<void> {
  if (!(await db.executeQuery(ADVANCE_HEAD)).numAffectedRows) {
    throw new Error('change_feed_head row is missing (migration 008)');
  }
}

// Read before every search (modules/search/search-follower.ts): compiled once and, on SQLite, read directly.
const changeHead = compiledOnce(
  (db) => db.selectFrom('change_feed_head').select('seq').where('id', '=', sql.lit(1)),
  [] as const,
);

/** The last change sequence number committed: every change up to it is readable. */
export async function readChangeHead(db: Db): Promise<number> {
  const [row] = await changeHead(db);
  return Number(row?.seq ?? 0);
}

/**
 * The head with the identity of the table that holds it. A restore from backup puts an older head
 * back; `pg_restore --clean` (or a restore into a new database) also recreates the table, so on
 * PostgreSQL a changed `tableoid` tells a restore apart even once new writes have carried the head
 * past where a node had read. SQLite has no such identity (a node there is stopped for a restore).
 */
export interface ChangeFeedHead {
  seq: number;
  generation: string | null;
}

const changeHeadWithGeneration = compiledOnce(
  (db) =>
    db
      .selectFrom('change_feed_head')
      .select([
        'seq',
        sqlDialect(db) === 'postgres'
          ? sql<string | null>`tableoid::text`.as('generation')
          : sql<string | null>`null`.as('generation'),
      ])
      .where('id', '=', sql.lit(1)),
  [] as const,
);

/** The head before a search (modules/search/search-follower.ts), with what tells a restored feed apart. */
export async function readChangeFeedHead(db: Db): Promise<ChangeFeedHead> {
  const [row] = await changeHeadWithGeneration(db);
  return { seq: Number(row?.seq ?? 0), generation: row?.generation ?? null };
}

/** Agents whose latest change comes after `seq`, in change order (each agent once, at its latest state). */
export async function agentsChangedAfter(db: Db, seq: number, limit: number): Promise<AgentRow[]> {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('change_seq', '>', seq)
    .orderBy('change_seq')
    .limit(limit)
    .execute();
}
