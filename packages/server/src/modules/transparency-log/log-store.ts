import type { Db } from '../../db/connect.js';

export interface LogRecordRow {
  seq: number;
  operation: string;
  record: string;
}

/** The first change sequence number the log holds (leaf 0). */
export async function readLogStart(db: Db): Promise<number> {
  const row = await db.selectFrom('log_start').select('first_seq').where('id', '=', 1).executeTakeFirst();
  if (row === undefined) throw new Error('log_start row is missing (migration 014)');
  return Number(row.first_seq);
}

/** Log records numbered from `fromSeq`, in order. */
export async function logRecordsFrom(db: Db, fromSeq: number, limit: number): Promise<LogRecordRow[]> {
  const rows = await db
    .selectFrom('log_records')
    .select(['seq', 'operation', 'record'])
    .where('seq', '>=', fromSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

/** The agent's latest change number, or undefined when no agent has the DID. */
export async function latestChangeOf(db: Db, did: string): Promise<number | undefined> {
  const row = await db.selectFrom('agents').select('change_seq').where('did', '=', did).executeTakeFirst();
  return row === undefined ? undefined : Number(row.change_seq);
}
