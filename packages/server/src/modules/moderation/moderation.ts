import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import type { AgentStatus } from '../../db/schema/index.js';
import { ConflictError, NotFoundError, agentNotFound } from '../../kernel/errors.js';
import {
  readRemoteEntry,
  restoreRemoteEntry,
  suspendRemoteEntry,
} from '../federation/remote-entries-store.js';
import { findAgentStatus } from '../agents/agents-store.js';
import { stampAgentChange } from '../agents/change-feed-store.js';
import { appendLogEvent } from '../agents/log-event-store.js';
import type { ProfileModeration } from '../agents/schemas.js';
import { requireDid } from '../identity/did-param.js';
import {
  insertDecision,
  latestDecision,
  listDecisions,
  markReportsActioned,
  moveAgentStatus,
  type DecisionRow,
} from './moderation-store.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import {
  MODERATION_RULES,
  type Decision,
  type DecisionsPage,
  type DecisionsQuery,
  type RestoreRequest,
  type SuspendRequest,
} from './schemas.js';

export interface ModerationServiceDeps {
  db: Db;
  /** The agents module's writer (group commit on SQLite): a decision is a write of the agent. */
  writes: TransactionRunner;
  clock: Clock;
  didWebDomain: string;
}

/**
 * The operator's decisions (docs/moderation.md). A suspension moves the agent to status `suspended`
 * and stamps it as a profile update does, so every node's search index, the change feed, the profile
 * cache and the peers following the log see it in their next read; its event leaf
 * (`moderation.suspended`) says why. A restoration moves it back the same way. The agent's data,
 * reviews and tasks are never touched.
 */
export class ModerationService {
  constructor(private readonly deps: ModerationServiceDeps) {}

  suspendAgent(rawDid: string, command: SuspendRequest): Promise<Decision> {
    return this.decide(rawDid, 'active', 'suspended', command);
  }

  restoreAgent(rawDid: string, command: RestoreRequest): Promise<Decision> {
    return this.decide(rawDid, 'suspended', 'active', command);
  }

  /** Suspends a remote entry: out of every federated listing, whatever its source sends, until restored. */
  suspendEntry(id: string, command: SuspendRequest): Promise<Decision> {
    return this.decideEntry(id, 'suspended', command);
  }

  restoreEntry(id: string, command: RestoreRequest): Promise<Decision> {
    return this.decideEntry(id, 'restored', command);
  }

  private decideEntry(
    id: string,
    action: 'suspended' | 'restored',
    command: SuspendRequest | RestoreRequest,
  ): Promise<Decision> {
    const now = this.deps.clock.now();
    return this.deps.writes.run(async (trx) => {
      const moved =
        action === 'suspended'
          ? await suspendRemoteEntry(trx, id, now)
          : await restoreRemoteEntry(trx, id, now);
      if (!moved) throw await entryRefusal(trx, id, action);
      return this.record(trx, id, action, command, now);
    });
  }

  /** The decision's event leaf, its row, and (for a suspension) the target's reports marked actioned. */
  private async record(
    trx: Db,
    target: string,
    action: 'suspended' | 'restored',
    command: SuspendRequest | RestoreRequest,
    now: number,
  ): Promise<Decision> {
    const seq = await appendLogEvent(trx, {
      op: `moderation.${action}`,
      subject: target,
      time: now,
      fields: { reason: command.reason },
    });
    const row: DecisionRow = {
      seq,
      target,
      action,
      reason: command.reason,
      note: command.note === undefined || command.note === '' ? null : command.note,
      decided_at: now,
    };
    await insertDecision(trx, row);
    if (action === 'suspended') await markReportsActioned(trx, target);
    return toDecision(row);
  }

  /** Why the agent is suspended, for its profile; undefined when its latest decision is not a suspension. */
  async suspensionOf(did: string): Promise<ProfileModeration | undefined> {
    const row = await latestDecision(this.deps.db, did);
    if (row?.action !== 'suspended') return undefined;
    return {
      state: 'suspended',
      reason: row.reason as ProfileModeration['reason'],
      note: row.note,
      since: Number(row.decided_at),
    };
  }

  /** The public list of decisions, newest first. */
  async decisions(query: DecisionsQuery): Promise<DecisionsPage> {
    const limit = query.limit ?? MODERATION_RULES.pageDefault;
    const list = `decisions:${query.target ?? ''}`;
    const before = query.cursor === undefined ? undefined : decodePageCursor(query.cursor, list, 'number');
    const rows = await listDecisions(this.deps.db, query.target, limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      decisions: page.map(toDecision),
      next_cursor:
        rows.length > limit && last !== undefined ? encodePageCursor(list, Number(last.seq)) : null,
    };
  }

  private async decide(
    rawDid: string,
    from: AgentStatus,
    to: AgentStatus,
    command: SuspendRequest | RestoreRequest,
  ): Promise<Decision> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    const action = to === 'suspended' ? 'suspended' : 'restored';
    const now = this.deps.clock.now();
    return this.deps.writes.run(async (trx) => {
      if (!(await moveAgentStatus(trx, did, from, to))) throw await refusal(trx, did, action);
      // The profile's own leaf first (its status), as a key rotation does, then the decision's.
      await stampAgentChange(trx, did, 'update');
      return this.record(trx, did, action, command, now);
    });
  }
}

async function refusal(db: Db, did: string, action: 'suspended' | 'restored'): Promise<Error> {
  const status = await findAgentStatus(db, did);
  if (status === undefined) return agentNotFound(did);
  if (action === 'suspended')
    return new ConflictError(
      'NOT_SUSPENDABLE',
      status === 'suspended'
        ? `${did} is already suspended; POST /api/admin/agents/{did}/restore undoes it`
        : `${did} is ${status}: only an active agent is suspended`,
    );
  return new ConflictError(
    'NOT_SUSPENDED',
    `${did} is ${status}, not suspended: only a suspended agent is restored`,
  );
}

async function entryRefusal(db: Db, id: string, action: 'suspended' | 'restored'): Promise<Error> {
  const entry = await readRemoteEntry(db, id);
  if (entry === undefined || entry.status === 'removed')
    return new NotFoundError(
      'REMOTE_ENTRY_NOT_FOUND',
      `no remote entry has the id ${JSON.stringify(id.slice(0, 200))}; ids come from search results with scope=federated or from GET /api/federation/entries`,
    );
  if (action === 'suspended')
    return new ConflictError(
      'NOT_SUSPENDABLE',
      `${id} is already suspended; POST /api/admin/entries/{id}/restore undoes it`,
    );
  return new ConflictError(
    'NOT_SUSPENDED',
    `${id} is listed, not suspended: only a suspended entry is restored`,
  );
}

function toDecision(row: DecisionRow): Decision {
  return {
    seq: Number(row.seq),
    target: row.target,
    action: row.action,
    reason: row.reason as Decision['reason'],
    note: row.note,
    decided_at: Number(row.decided_at),
  };
}
