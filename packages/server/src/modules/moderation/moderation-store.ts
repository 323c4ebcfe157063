import type { Db } from '../../db/connect.js';
import type { AgentStatus } from '../../db/schema/index.js';
import type {
  ModerationAppealsTable,
  ModerationDecisionsTable,
  ModerationReportsTable,
  ReportReason,
  ReportState,
} from '../../db/schema/moderation.js';

export type ReportRow = ModerationReportsTable;
export type DecisionRow = ModerationDecisionsTable;

export async function insertReport(db: Db, row: ReportRow): Promise<void> {
  await db.insertInto('moderation_reports').values(row).execute();
}

export async function findReportByPair(
  db: Db,
  reporterDid: string,
  target: string,
): Promise<ReportRow | undefined> {
  return db
    .selectFrom('moderation_reports')
    .selectAll()
    .where('reporter_did', '=', reporterDid)
    .where('target', '=', target)
    .executeTakeFirst();
}

export interface ReportFilter {
  target?: string;
  reason?: ReportReason;
  state?: ReportState;
}

/** Reports newest first (ids are UUIDv7), after the id `before` when given. */
export async function listReports(
  db: Db,
  filter: ReportFilter,
  limit: number,
  before: string | undefined,
): Promise<ReportRow[]> {
  let query = db.selectFrom('moderation_reports').selectAll();
  if (filter.target !== undefined) query = query.where('target', '=', filter.target);
  if (filter.reason !== undefined) query = query.where('reason', '=', filter.reason);
  if (filter.state !== undefined) query = query.where('state', '=', filter.state);
  if (before !== undefined) query = query.where('id', '<', before);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** The target's open reports are answered by a suspension. */
export async function markReportsActioned(db: Db, target: string): Promise<void> {
  await db
    .updateTable('moderation_reports')
    .set({ state: 'actioned' })
    .where('target', '=', target)
    .where('state', '=', 'open')
    .execute();
}

/** A task of `callerDid` with `targetDid`, the evidence a verified report names. */
export async function findTaskBetween(
  db: Db,
  taskId: string,
  callerDid: string,
  targetDid: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('tasks')
    .select('id')
    .where('id', '=', taskId)
    .where('caller_did', '=', callerDid)
    .where('target_did', '=', targetDid)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Moves an agent from one status to another; false when it is not in `from` (another decision, or a
 * deactivation, came first). The agent's profile columns are left as they were, so a restoration
 * brings back the very profile the suspension hid.
 */
export async function moveAgentStatus(
  db: Db,
  did: string,
  from: AgentStatus,
  to: AgentStatus,
): Promise<boolean> {
  const result = await db
    .updateTable('agents')
    .set({ status: to })
    .where('did', '=', did)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertDecision(db: Db, row: DecisionRow): Promise<void> {
  await db.insertInto('moderation_decisions').values(row).execute();
}

/** The target's latest decision. */
export async function latestDecision(db: Db, target: string): Promise<DecisionRow | undefined> {
  return db
    .selectFrom('moderation_decisions')
    .selectAll()
    .where('target', '=', target)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Decisions newest first, before the change number `before` when given. */
export async function listDecisions(
  db: Db,
  target: string | undefined,
  limit: number,
  before: number | undefined,
): Promise<DecisionRow[]> {
  let query = db.selectFrom('moderation_decisions').selectAll();
  if (target !== undefined) query = query.where('target', '=', target);
  if (before !== undefined) query = query.where('seq', '<', before);
  return query.orderBy('seq', 'desc').limit(limit).execute();
}

export type AppealRow = ModerationAppealsTable;

export async function insertAppeal(db: Db, row: AppealRow): Promise<void> {
  await db.insertInto('moderation_appeals').values(row).execute();
}

export async function findAppeal(db: Db, decisionSeq: number): Promise<AppealRow | undefined> {
  return db
    .selectFrom('moderation_appeals')
    .selectAll()
    .where('decision_seq', '=', decisionSeq)
    .executeTakeFirst();
}

/** Appeals newest first, before the decision `before` when given. */
export async function listAppeals(db: Db, limit: number, before: number | undefined): Promise<AppealRow[]> {
  let query = db.selectFrom('moderation_appeals').selectAll();
  if (before !== undefined) query = query.where('decision_seq', '<', before);
  return query.orderBy('decision_seq', 'desc').limit(limit).execute();
}
