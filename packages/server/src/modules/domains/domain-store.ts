import type { Db } from '../../db/connect.js';
import type { AgentDomainsTable, DomainProofMethod } from '../../db/schema/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError } from '../../kernel/errors.js';
import { stampAgentChange } from '../agents/change-feed-store.js';
import { appendLogEvent } from '../agents/log-event-store.js';

export type DomainRow = AgentDomainsTable;

export type DropReason = 'dropped' | 'proof_gone';

export async function domainsOf(db: Db, did: string): Promise<DomainRow[]> {
  return db.selectFrom('agent_domains').selectAll().where('did', '=', did).orderBy('domain').execute();
}

export async function handleOf(db: Db, did: string): Promise<{ handle: string; domain: string } | undefined> {
  return db
    .selectFrom('agent_handles')
    .select(['handle', 'domain'])
    .where('did', '=', did)
    .executeTakeFirst();
}

export async function didOfHandle(db: Db, handle: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('agent_handles')
    .select('did')
    .where('handle', '=', handle)
    .executeTakeFirst();
  return row?.did;
}

/** The verified domains of those of `dids` that hold any (one read for a page of search results). */
export async function domainsOfAgents(db: Db, dids: readonly string[]): Promise<Map<string, string[]>> {
  const held = new Map<string, string[]>();
  if (dids.length === 0) return held;
  const rows = await db
    .selectFrom('agent_domains')
    .select(['did', 'domain'])
    .where('did', 'in', [...dids])
    .orderBy('did')
    .orderBy('domain')
    .execute();
  for (const row of rows) {
    const list = held.get(row.did);
    if (list === undefined) held.set(row.did, [row.domain]);
    else list.push(row.domain);
  }
  return held;
}

/** The agents holding a verified domain, for the domain= search filter. */
export async function holdersOf(db: Db, domain: string): Promise<string[]> {
  const rows = await db.selectFrom('agent_domains').select('did').where('domain', '=', domain).execute();
  return rows.map((row) => row.did);
}

/**
 * Records a proven claim. A new one stamps the profile (it shows the domain) and is logged as
 * `domain.claimed`; a claim proven again only counts as checked. Returns whether it was new.
 */
export async function recordClaim(
  trx: Db,
  did: string,
  domain: string,
  method: DomainProofMethod,
  at: number,
): Promise<boolean> {
  const refreshed = await trx
    .updateTable('agent_domains')
    .set({ method, checked_at: at, failed_checks: 0 })
    .where('did', '=', did)
    .where('domain', '=', domain)
    .executeTakeFirst();
  if (refreshed.numUpdatedRows > 0n) return false;
  // Two first claims racing: the one that does not insert leaves the other's, as a re-check would.
  const inserted = await trx
    .insertInto('agent_domains')
    .values({ did, domain, method, verified_at: at, checked_at: at, failed_checks: 0 })
    .onConflict((conflict) => conflict.columns(['did', 'domain']).doNothing())
    .returning('did')
    .executeTakeFirst();
  if (inserted === undefined) return false;
  await stampAgentChange(trx, did);
  await appendLogEvent(trx, { op: 'domain.claimed', subject: did, time: at, fields: { domain, method } });
  return true;
}

/**
 * Removes a claim (`checkedAt`: only if no other node re-checked it meanwhile), the handle under it if
 * any, stamps the profile and logs both. False when there was no such claim.
 */
export async function removeClaim(
  trx: Db,
  did: string,
  domain: string,
  at: number,
  reason: DropReason,
  checkedAt?: number,
): Promise<boolean> {
  let query = trx.deleteFrom('agent_domains').where('did', '=', did).where('domain', '=', domain);
  if (checkedAt !== undefined) query = query.where('checked_at', '=', checkedAt);
  const removed = await query.executeTakeFirst();
  if (removed.numDeletedRows === 0n) return false;
  const handle = await handleOf(trx, did);
  if (handle !== undefined && handle.domain === domain) await writeHandle(trx, did, undefined, at, false);
  await stampAgentChange(trx, did);
  await appendLogEvent(trx, { op: 'domain.dropped', subject: did, time: at, fields: { domain, reason } });
  return true;
}

/** A re-check found no proof: counts it, if no other node re-checked the claim meanwhile. */
export async function recordFailedCheck(trx: Db, row: DomainRow, at: number): Promise<boolean> {
  const result = await trx
    .updateTable('agent_domains')
    .set({ checked_at: at, failed_checks: row.failed_checks + 1 })
    .where('did', '=', row.did)
    .where('domain', '=', row.domain)
    .where('checked_at', '=', row.checked_at)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A re-check found the proof. */
export async function recordPassedCheck(
  trx: Db,
  row: DomainRow,
  method: DomainProofMethod,
  at: number,
): Promise<void> {
  await trx
    .updateTable('agent_domains')
    .set({ method, checked_at: at, failed_checks: 0 })
    .where('did', '=', row.did)
    .where('domain', '=', row.domain)
    .where('checked_at', '=', row.checked_at)
    .execute();
}

/**
 * Active agents' claims last checked at or before `before`, the longest unchecked first (a deactivated
 * agent's claims wait: it is neither listed nor searched).
 */
export async function dueClaims(db: Db, before: number, limit: number): Promise<DomainRow[]> {
  return db
    .selectFrom('agent_domains')
    .selectAll('agent_domains')
    .where('checked_at', '<=', before)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('agents')
          .select('agents.did')
          .whereRef('agents.did', '=', 'agent_domains.did')
          .where('agents.status', '=', 'active'),
      ),
    )
    .orderBy('checked_at')
    .limit(limit)
    .execute();
}

export const handleTaken = (handle: string): ConflictError =>
  new ConflictError(
    'HANDLE_TAKEN',
    `handle ${handle} is another agent's; choose another name`,
    'Handle taken',
  );

/**
 * Gives the agent `handle` (undefined: none), logged as `handle.changed` with the one it replaces;
 * stamps the profile. Returns whether anything changed.
 */
export async function writeHandle(
  trx: Db,
  did: string,
  next: { handle: string; domain: string } | undefined,
  at: number,
  /** False when the caller stamps the profile itself. */
  stamp = true,
): Promise<boolean> {
  const previous = await handleOf(trx, did);
  if (previous?.handle === next?.handle) return false;
  if (previous !== undefined) await trx.deleteFrom('agent_handles').where('did', '=', did).execute();
  if (next !== undefined) {
    const holder = await didOfHandle(trx, next.handle);
    if (holder !== undefined) throw handleTaken(next.handle);
    try {
      await trx
        .insertInto('agent_handles')
        .values({ handle: next.handle, did, domain: next.domain, set_at: at })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw handleTaken(next.handle);
      throw error;
    }
  }
  if (stamp) await stampAgentChange(trx, did);
  await appendLogEvent(trx, {
    op: 'handle.changed',
    subject: did,
    time: at,
    fields: { handle: next?.handle ?? null, previous_handle: previous?.handle ?? null },
  });
  return true;
}
