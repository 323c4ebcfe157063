/**
 * Write transactions per invocation on PostgreSQL: each transaction that writes gets a transaction id,
 * and each such commit waits for a WAL flush under `synchronous_commit = on`. The count is the growth
 * of txid_current() (less this counter's own ids) over the growth of the tasks table, read before and
 * after a scenario (warm-up included on both sides, so the ratio holds).
 */
import pg from 'pg';

export interface CommitCount {
  writeTransactions: number;
  invocations: number;
  perInvocation: number;
}

export async function commitCounter(databaseUrl: string): Promise<{
  start(): Promise<void>;
  stop(): Promise<CommitCount>;
}> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const snapshot = async () => {
    const { rows } = await client.query<{ xid: string; tasks: string }>(
      'select txid_current()::text as xid, (select count(*) from tasks)::text as tasks',
    );
    return { xid: Number(rows[0]?.xid), tasks: Number(rows[0]?.tasks) };
  };
  let before = { xid: 0, tasks: 0 };
  return {
    start: async () => {
      before = await snapshot();
    },
    stop: async () => {
      const after = await snapshot();
      await client.end();
      // The second snapshot's own transaction took one id.
      const writeTransactions = after.xid - before.xid - 1;
      const invocations = after.tasks - before.tasks;
      return { writeTransactions, invocations, perInvocation: writeTransactions / Math.max(1, invocations) };
    },
  };
}
