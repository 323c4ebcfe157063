import { CompiledQuery } from 'kysely';
import type { Db } from '../../db/connect.js';
import { sqlDialect } from '../../db/dialect.js';

/** A value an event leaf may carry: leaves are flat, so any follower can check them field by field. */
export type LogEventValue = string | number | boolean | null;

/**
 * An event for the transparency log (docs/transparency-log.md, "Event leaves"): something that happened to
 * an agent or a remote entry that is not a profile change (a key rotation, a suspension, a tool change).
 */
export interface LogEvent {
  /** The kind: lowercase letters, digits, "_" and "."; each kind's fields are documented with it. */
  op: string;
  /** A DID or a remote entry id. */
  subject: string;
  /** When it happened (milliseconds). */
  time: number;
  fields?: Readonly<Record<string, LogEventValue>>;
}

const EVENT_OP = /^[a-z][a-z0-9_.]{0,63}$/;
/** Names the leaf itself owns, or that would make an event read as a profile leaf. */
const RESERVED_FIELDS = new Set(['v', 'seq', 'op', 'subject', 'time', 'did', 'profile_sha256']);
const PROFILE_OPERATIONS = new Set(['register', 'update', 'reputation', 'deactivate']);

const APPEND_POSTGRES = CompiledQuery.raw(
  `with head as (update change_feed_head set seq = seq + 1 where id = 1 returning seq)
    insert into log_records (seq, operation, record) select seq, $1::text, $2::text from head returning seq`,
);
const ADVANCE_SQLITE = CompiledQuery.raw('update change_feed_head set seq = seq + 1 where id = 1');
const APPEND_SQLITE = CompiledQuery.raw(
  `insert into log_records (seq, operation, record) select seq, ?, ? from change_feed_head where id = 1 returning seq`,
);

/**
 * Appends an event to the transparency log under the change feed's next number and returns that number.
 * Call it inside the transaction that makes the change, as the stamp of a profile write is: the head row
 * stays locked (PostgreSQL) or written (SQLite) until commit, so log records commit in order, and the
 * event is logged exactly when its change commits.
 */
export async function appendLogEvent(db: Db, event: LogEvent): Promise<number> {
  if (!EVENT_OP.test(event.op) || PROFILE_OPERATIONS.has(event.op)) {
    throw new Error(`"${event.op}" is not an event kind name (or is a profile operation)`);
  }
  if (!Number.isSafeInteger(event.time)) throw new Error(`event time ${event.time} is not milliseconds`);
  const record: Record<string, LogEventValue> = { subject: event.subject, time: event.time };
  for (const [name, value] of Object.entries(event.fields ?? {})) {
    if (RESERVED_FIELDS.has(name)) throw new Error(`an event cannot carry a field named "${name}"`);
    record[name] = value;
  }
  const parameters = [event.op, JSON.stringify(record)];
  if (sqlDialect(db) === 'postgres') {
    const { rows } = await db.executeQuery<{ seq: number | string }>({ ...APPEND_POSTGRES, parameters });
    if (rows[0] === undefined) throw new Error('no change_feed_head row (migration 008)');
    return Number(rows[0].seq);
  }
  await db.executeQuery(ADVANCE_SQLITE);
  const { rows } = await db.executeQuery<{ seq: number | string }>({ ...APPEND_SQLITE, parameters });
  if (rows[0] === undefined) throw new Error('no change_feed_head row (migration 008)');
  return Number(rows[0].seq);
}

/** True for a log record that holds an event rather than an agent's profile. */
export function isEventRecord(operation: string): boolean {
  return !PROFILE_OPERATIONS.has(operation);
}
