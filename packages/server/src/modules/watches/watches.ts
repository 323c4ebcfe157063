import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { BadRequestError, ConflictError, NotFoundError, TooManyRequestsError } from '../../kernel/errors.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { AuthenticatedAgent } from '../agents/authentication.js';
import {
  AGENT_WATCH_EVENTS,
  ENTRY_WATCH_EVENTS,
  WATCH_RULES,
  type CreateWatchRequest,
  type CreatedWatch,
  type Watch,
  type WatchesPage,
  type WatchesQuery,
  type WatchEventType,
} from './schemas.js';
import { messageBody, type AvailabilityStatuses, type WatchEvent } from './watch-events.js';
import {
  deleteWatch,
  insertDeliveries,
  insertWatch,
  rememberStatus,
  watchCounts,
  watchersOf,
  watchesOf,
  type WatchRow,
} from './watches-store.js';

/** What a watch may name: a local agent or a remote entry. Declared here, answered by their modules. */
export interface WatchTargets {
  kindOf(target: string): Promise<'agent' | 'entry' | undefined>;
}

export interface WatchLimits {
  /** Live watches one agent may hold. */
  maxPerAgent: number;
  /** Live watches on one target (each event is that many deliveries). */
  maxPerTarget: number;
  /** Watches one agent may create per window (deleted ones count). */
  rateLimit: number;
  rateWindowMs: number;
}

export interface WatchServiceDeps {
  db: Db;
  clock: Clock;
  policy: WebhookNetworkPolicy;
  /** http:// URLs accepted too (with WEBHOOK_ALLOW_PRIVATE_NETWORKS: development and tests only). */
  allowHttp: boolean;
  targets: WatchTargets;
  /** Availability now, so a new availability watch is measured from the status it starts at. */
  availability: AvailabilityStatuses;
  limits: WatchLimits;
}

/** Subscriptions to another agent's or a remote entry's changes, and the events they are told of. */
export class WatchService {
  constructor(private readonly deps: WatchServiceDeps) {}

  async create(caller: AuthenticatedAgent, request: CreateWatchRequest): Promise<CreatedWatch> {
    const url = await this.checkedUrl(request.url);
    const kind = await this.deps.targets.kindOf(request.target);
    if (kind === undefined) {
      throw new NotFoundError(
        'WATCH_TARGET_NOT_FOUND',
        `nothing to watch at ${JSON.stringify(request.target.slice(0, 200))}: give a registered agent's DID or a remote entry id from GET /api/federation/entries`,
      );
    }
    const allowed: readonly string[] = kind === 'agent' ? AGENT_WATCH_EVENTS : ENTRY_WATCH_EVENTS;
    const wrong = request.events.filter((event) => !allowed.includes(event));
    if (wrong.length > 0) {
      throw new BadRequestError(
        'INVALID_WATCH_EVENTS',
        `${wrong.join(', ')} cannot be watched on ${kind === 'agent' ? 'an agent' : 'a remote entry'}; its events are ${allowed.join(', ')}`,
      );
    }
    const now = this.deps.clock.now();
    const row: WatchRow = {
      id: `wat_${randomUUID().replaceAll('-', '')}`,
      owner_did: caller.did,
      target: request.target,
      url: url.toString(),
      secret: `whsec_${randomBytes(24).toString('base64')}`,
      events: JSON.stringify(request.events),
      created_at: now,
      deleted_at: null,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      const { maxPerAgent, maxPerTarget, rateLimit, rateWindowMs } = this.deps.limits;
      const counts = await watchCounts(trx, caller.did, request.target, now - rateWindowMs);
      if (counts.createdSince >= rateLimit) {
        const retryAfter = Math.max(1, Math.ceil(((counts.oldestSince ?? now) + rateWindowMs - now) / 1000));
        throw new TooManyRequestsError(
          'WATCH_RATE_LIMITED',
          `At most ${rateLimit} watches created per ${rateWindowMs / 1000} s; try again in ${retryAfter} s`,
          retryAfter,
        );
      }
      if (counts.owned >= maxPerAgent) {
        throw new ConflictError(
          'WATCH_LIMIT_REACHED',
          `an agent may hold at most ${maxPerAgent} watches: delete one (DELETE /api/watches/{id}) first`,
        );
      }
      if (counts.onTarget >= maxPerTarget) {
        throw new ConflictError(
          'WATCH_LIMIT_REACHED',
          `${request.target} already has the most watches one target may have (${maxPerTarget})`,
        );
      }
      await insertWatch(trx, row);
    });
    if (request.events.includes('agent.availability_changed')) {
      // The status it starts at is the one changes are measured from (no event at creation).
      const status = (await this.deps.availability([row.target])).get(row.target) ?? 'unknown';
      await rememberStatus(this.deps.db, row.target, status, now);
    }
    return { ...view(row), secret: row.secret };
  }

  async list(caller: AuthenticatedAgent, query: WatchesQuery): Promise<WatchesPage> {
    const limit = query.limit ?? WATCH_RULES.pageDefault;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await watchesOf(this.deps.db, caller.did, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      watches: page.map(view),
      next_cursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null,
    };
  }

  async remove(caller: AuthenticatedAgent, id: string): Promise<void> {
    const removed = await this.deps.db
      .transaction()
      .execute((trx) => deleteWatch(trx, caller.did, id, this.deps.clock.now()));
    if (!removed) {
      throw new NotFoundError('WATCH_NOT_FOUND', `you have no watch with the id ${JSON.stringify(id)}`);
    }
  }

  /**
   * Queues one delivery of `event` per live watch of its target that subscribes to its type. Pass the
   * transaction that records the change (`db`), so the deliveries exist exactly when the change does;
   * call it once per change (the caller's own write decides which node saw it first).
   */
  async publish(event: WatchEvent, db: Db = this.deps.db): Promise<number> {
    const watchers = await watchersOf(db, event.target, event.type, this.deps.limits.maxPerTarget);
    const now = this.deps.clock.now();
    await insertDeliveries(
      db,
      watchers.map((watch) => ({
        id: `msg_${randomUUID().replaceAll('-', '')}`,
        watch_id: watch.id,
        body: messageBody(event, watch.id),
        next_attempt_at: now,
        created_at: now,
      })),
    );
    return watchers.length;
  }

  private async checkedUrl(raw: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new BadRequestError('INVALID_URL', 'url must be an absolute https:// URL');
    }
    const schemes = this.deps.allowHttp ? ['https:', 'http:'] : ['https:'];
    if (
      !schemes.includes(url.protocol) ||
      url.hostname === '' ||
      url.username !== '' ||
      url.password !== ''
    ) {
      throw new BadRequestError(
        'INVALID_URL',
        'url must be an absolute https:// URL without user or password',
      );
    }
    try {
      await this.deps.policy.checkConfiguredUrl(url);
    } catch (error) {
      throw new BadRequestError(
        'INVALID_URL',
        `url is not reachable for webhooks: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return url;
  }
}

function view(row: WatchRow): Watch {
  return {
    id: row.id,
    target: row.target,
    url: row.url,
    events: JSON.parse(row.events) as WatchEventType[],
    created_at: Number(row.created_at),
  };
}

function encodeCursor(row: WatchRow): string {
  return Buffer.from(JSON.stringify({ v: 1, c: Number(row.created_at), i: row.id })).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  const { v, c, i } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (v !== 1 || typeof c !== 'number' || !Number.isSafeInteger(c) || typeof i !== 'string') {
    throw new BadRequestError(
      'INVALID_CURSOR',
      'cursor is not one this registry issued: pass next_cursor unchanged',
    );
  }
  return { createdAt: c, id: i };
}
