import { appealMessage } from '@agent-registry/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, agentNotFound } from '../../kernel/errors.js';
import { findAgent } from '../agents/agents-store.js';
import { assertAddressed, assertSigned, claimOnce, currentKeyOf } from '../key-rotation/key-proof.js';
import { requireDid } from '../identity/did-param.js';
import { findAppeal, insertAppeal, latestDecision, listAppeals, type AppealRow } from './moderation-store.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import {
  MODERATION_RULES,
  type Appeal,
  type AppealRequest,
  type AppealsPage,
  type AppealsQuery,
} from './schemas.js';

export interface AppealServiceDeps {
  db: Db;
  clock: Clock;
  didWebDomain: string;
  /** This registry's origin: the only audience accepted. */
  audience: string;
}

/**
 * A suspended agent's appeal of its current suspension, once per decision. Its token is refused while it
 * is suspended, so the appeal is a message signed with its key, as key changes are (docs/signing.md).
 */
export class AppealService {
  constructor(private readonly deps: AppealServiceDeps) {}

  async appeal(rawDid: string, request: AppealRequest): Promise<Appeal> {
    const { db, clock, audience } = this.deps;
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    const now = clock.now();
    const agent = await findAgent(db, did);
    if (agent === undefined) throw agentNotFound(did);
    const decision = await latestDecision(db, did);
    if (agent.status !== 'suspended' || decision?.action !== 'suspended')
      throw new ConflictError('NOT_SUSPENDED', `${did} is not suspended: only a suspension is appealed`);
    if (Number(decision.seq) !== request.decision)
      throw new ConflictError(
        'NOT_SUSPENDED',
        `decision ${request.decision} is not ${did}'s current suspension (${Number(decision.seq)}); appeal that one`,
      );
    assertAddressed(
      { db, didWebDomain: this.deps.didWebDomain, audience },
      request.audience,
      request.timestamp,
      now,
    );
    const message = appealMessage({
      did,
      audience,
      decision: request.decision,
      statement: request.statement,
      timestamp: request.timestamp,
    });
    await assertSigned(
      currentKeyOf(agent).parsed,
      message,
      request.signature,
      'signature',
      "the agent's key",
    );
    const row: AppealRow = {
      decision_seq: request.decision,
      did,
      statement: request.statement,
      created_at: now,
    };
    try {
      await db.transaction().execute(async (trx) => {
        if ((await findAppeal(trx, request.decision)) !== undefined) throw alreadyAppealed(request.decision);
        await claimOnce(trx, message, request.timestamp, now);
        await insertAppeal(trx, row);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw alreadyAppealed(request.decision);
      throw error;
    }
    return toAppeal(row);
  }

  /** The operator's list, newest first. */
  async list(query: AppealsQuery): Promise<AppealsPage> {
    const limit = query.limit ?? MODERATION_RULES.pageDefault;
    const before =
      query.cursor === undefined ? undefined : decodePageCursor(query.cursor, 'appeals', 'number');
    const rows = await listAppeals(this.deps.db, limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      appeals: page.map(toAppeal),
      next_cursor:
        rows.length > limit && last !== undefined
          ? encodePageCursor('appeals', Number(last.decision_seq))
          : null,
    };
  }
}

const alreadyAppealed = (decision: number): ConflictError =>
  new ConflictError('APPEAL_EXISTS', `decision ${decision} was appealed already: one appeal per decision`);

function toAppeal(row: AppealRow): Appeal {
  return {
    decision: Number(row.decision_seq),
    did: row.did,
    statement: row.statement,
    created_at: Number(row.created_at),
  };
}
