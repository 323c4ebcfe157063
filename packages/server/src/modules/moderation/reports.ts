import { v7 as uuidv7 } from 'uuid';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../kernel/errors.js';
import { findAgentStatus } from '../agents/agents-store.js';
import type { AuthenticatedAgent } from '../agents/authentication.js';
import type { RegistrationLimiter } from '../agents/registration-limits.js';
import { requireDid } from '../identity/did-param.js';
import { readRemoteEntry } from '../federation/remote-entries-store.js';
import {
  findReportByPair,
  findTaskBetween,
  insertReport,
  listReports,
  type ReportRow,
} from './moderation-store.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import {
  MODERATION_RULES,
  type Report,
  type ReportReceipt,
  type ReportRequest,
  type ReportsPage,
  type ReportsQuery,
} from './schemas.js';

export interface ReportServiceDeps {
  db: Db;
  clock: Clock;
  didWebDomain: string;
  /** Per client address and network (the registration limiter's buckets, counted apart). */
  limiter: RegistrationLimiter;
  /** Reports one reporting agent may make per window (the limiter's window). */
  perReporter: number;
}

/**
 * Abuse reports (docs/moderation.md): one per reporter and target, by an authenticated agent, counted
 * in the database per reporter and per address in the transaction that stores it, so a flood from one
 * agent or one network is refused on every node.
 */
export class ReportService {
  constructor(private readonly deps: ReportServiceDeps) {}

  async submit(
    caller: AuthenticatedAgent,
    command: ReportRequest,
    client: { address: string },
  ): Promise<ReportReceipt> {
    const { db, clock } = this.deps;
    const target = await this.requireTarget(command.target);
    if (target === caller.did) throw new ForbiddenError('SELF_REPORT', 'An agent cannot report itself');
    const taskId = command.task_id ?? null;
    const now = clock.now();
    const row: ReportRow = {
      id: uuidv7(),
      reporter_did: caller.did,
      target,
      reason: command.reason,
      details: command.details === undefined || command.details === '' ? null : command.details,
      task_id: taskId,
      verified: taskId === null ? 0 : 1,
      state: 'open',
      created_at: now,
    };
    try {
      await db.transaction().execute(async (trx) => {
        const earlier = await findReportByPair(trx, caller.did, target);
        if (earlier !== undefined) throw alreadyReported(target, earlier.id);
        if (taskId !== null && !(await findTaskBetween(trx, taskId, caller.did, target)))
          throw new BadRequestError(
            'REPORT_TASK_NOT_FOUND',
            `task_id ${taskId.slice(0, MODERATION_RULES.taskIdMaxLength)} is not a task in which you invoked ${target}; omit task_id to send an unverified report`,
          );
        await this.deps.limiter.admit(trx, client.address, now, [
          { key: `reporter:${caller.did}`, limit: this.deps.perReporter, what: 'reporting agent' },
        ]);
        await insertReport(trx, row);
      });
    } catch (error) {
      // The unique (reporter, target) index is the last word when two reports race.
      if (isUniqueViolation(error)) throw alreadyReported(target);
      throw error;
    }
    return {
      id: row.id,
      target,
      reason: row.reason,
      verified: row.verified === 1,
      state: row.state,
      created_at: now,
    };
  }

  /** The operator's list, newest first. */
  async list(query: ReportsQuery): Promise<ReportsPage> {
    const limit = query.limit ?? MODERATION_RULES.pageDefault;
    const list = `reports:${query.target ?? ''}:${query.reason ?? ''}:${query.state ?? ''}`;
    const before = query.cursor === undefined ? undefined : decodePageCursor(query.cursor, list, 'string');
    const rows = await listReports(
      this.deps.db,
      {
        ...(query.target === undefined ? {} : { target: query.target }),
        ...(query.reason === undefined ? {} : { reason: query.reason }),
        ...(query.state === undefined ? {} : { state: query.state }),
      },
      limit + 1,
      before,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      reports: page.map(toReport),
      next_cursor: rows.length > limit && last !== undefined ? encodePageCursor(list, last.id) : null,
    };
  }

  /** A DID of an agent registered here (in any status), or the id of a remote entry listed here. */
  private async requireTarget(raw: string): Promise<string> {
    if (raw.startsWith('did:')) {
      const did = requireDid(raw, this.deps.didWebDomain).did;
      if ((await findAgentStatus(this.deps.db, did)) !== undefined) return did;
      throw targetNotFound(raw);
    }
    const entry = await readRemoteEntry(this.deps.db, raw);
    if (entry === undefined) throw targetNotFound(raw);
    return entry.id;
  }
}

function toReport(row: ReportRow): Report {
  return {
    id: row.id,
    reporter_did: row.reporter_did,
    target: row.target,
    reason: row.reason,
    details: row.details,
    task_id: row.task_id,
    verified: row.verified === 1,
    state: row.state,
    created_at: Number(row.created_at),
  };
}

const targetNotFound = (raw: string): NotFoundError =>
  new NotFoundError(
    'REPORT_TARGET_NOT_FOUND',
    `${JSON.stringify(raw.slice(0, 200))} is neither an agent registered here nor a remote entry listed here (ids come from search results with scope=federated)`,
  );

// One report per reporter and target, answered 409 rather than replayed: a second report with other
// details would otherwise be dropped without the reporter knowing (docs/decisions/moderation.md).
const alreadyReported = (target: string, id?: string): ConflictError =>
  new ConflictError(
    'REPORT_EXISTS',
    `You have already reported ${target}${id === undefined ? '' : ` (report ${id})`}; one report per reporter and target is kept, and the operator sees it`,
    'Already reported',
  );
