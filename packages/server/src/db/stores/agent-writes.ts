import type { Db } from '../connect.js';
import { deleteFullTextDocument, writeFullTextDocument, type FullTextDocument } from '../full-text.js';
import { findAgent, insertAgent, updateActiveAgent, type AgentPatch, type NewAgentRow } from './agents.js';
import { stampAgentChange } from './change-feed.js';

interface StoredCapability {
  type: string;
  description?: string | null;
  tags?: string[] | null;
}

export interface IndexedAgentFields {
  did: string;
  name: string;
  description?: string | null;
  /** JSON text, as stored in agents.capabilities. */
  capabilities: string;
  /** JSON text, as stored in agents.tags. */
  tags: string;
}

/** The form filters compare: NFKC, trimmed, lower-case, so "Translation" finds "translation". */
export function searchKey(value: string): string {
  return value.normalize('NFKC').trim().toLowerCase();
}

/** What search indexes for an agent: capability types and tags for filters, a document for full text. */
export function agentIndexEntries(agent: IndexedAgentFields): {
  capabilityTypes: string[];
  tags: string[];
  document: FullTextDocument;
} {
  const capabilities = JSON.parse(agent.capabilities) as StoredCapability[];
  const tags = JSON.parse(agent.tags) as string[];
  const capabilityTags = capabilities.flatMap((capability) => capability.tags ?? []);
  return {
    capabilityTypes: [...new Set(capabilities.map((capability) => searchKey(capability.type)))],
    tags: [...new Set(tags.map(searchKey))].filter((tag) => tag !== ''),
    document: {
      name: agent.name,
      description: agent.description ?? '',
      capabilities: capabilities
        .map((capability) => `${capability.type} ${capability.description ?? ''}`.trim())
        .join('\n'),
      tags: [...tags, ...capabilityTags].join('\n'),
    },
  };
}

/**
 * Rewrites the agent's search side tables and full-text document; call in the agent's write transaction.
 * The search index holds active agents only (deactivation removes them), so counts come from the index alone.
 */
export async function writeAgentIndex(db: Db, agent: IndexedAgentFields): Promise<void> {
  const entries = agentIndexEntries(agent);
  await db.deleteFrom('agent_capabilities').where('did', '=', agent.did).execute();
  await db.deleteFrom('agent_tags').where('did', '=', agent.did).execute();
  if (entries.capabilityTypes.length > 0) {
    await db
      .insertInto('agent_capabilities')
      .values(entries.capabilityTypes.map((type) => ({ did: agent.did, type })))
      .execute();
  }
  if (entries.tags.length > 0) {
    await db
      .insertInto('agent_tags')
      .values(entries.tags.map((tag) => ({ did: agent.did, tag })))
      .execute();
  }
  await writeFullTextDocument(db, agent.did, entries.document);
}

/** Takes a deactivated agent out of the search side tables and the full-text index. */
export async function removeAgentIndex(db: Db, did: string): Promise<void> {
  await db.deleteFrom('agent_capabilities').where('did', '=', did).execute();
  await db.deleteFrom('agent_tags').where('did', '=', did).execute();
  await deleteFullTextDocument(db, did);
}

/**
 * Takes out of the search index every agent that is not active but still has index rows, and returns
 * how many. Run by migration 004 and at every start: a node of an earlier version (a rolling upgrade)
 * deactivates without touching the index (migration 004 runs it before the change feed exists, so
 * without `stamp`). Every indexed agent has capability rows (at least one
 * capability), so those find them.
 */
export async function sweepInactiveFromIndex(
  db: Db,
  options: { stamp: boolean } = { stamp: true },
): Promise<number> {
  const stale = await db
    .selectFrom('agents')
    .innerJoin('agent_capabilities', 'agent_capabilities.did', 'agents.did')
    .select('agents.did')
    .distinct()
    .where('agents.status', '<>', 'active')
    .execute();
  // Stamped, so that every node's in-memory index (fed by the change feed) drops them too.
  const removeAndStamp = async (trx: Db, did: string) => {
    await removeAgentIndex(trx, did);
    if (options.stamp) await stampAgentChange(trx, did);
  };
  for (const { did } of stale) {
    if (db.isTransaction) await removeAndStamp(db, did);
    else await db.transaction().execute((trx) => removeAndStamp(trx, did));
  }
  return stale.length;
}

/** updateActiveAgent with a patch that deactivates it, and its removal from the search index, in one transaction. */
export async function deactivateIndexedAgent(db: Db, did: string, patch: AgentPatch): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await updateActiveAgent(trx, did, patch);
    if (updated) {
      await removeAgentIndex(trx, did);
      await stampAgentChange(trx, did);
    }
    return updated;
  });
}

/** Inserts an agent and its search index in one transaction (a unique violation propagates as is). */
export async function insertIndexedAgent(db: Db, row: NewAgentRow): Promise<void> {
  await db.transaction().execute((trx) => insertIndexedAgentIn(trx, row));
}

/**
 * insertIndexedAgent's writes, inside a transaction (or savepoint) the caller holds; the change-feed
 * stamp is its last statement.
 */
export async function insertIndexedAgentIn(trx: Db, row: NewAgentRow): Promise<void> {
  await insertAgent(trx, row);
  await writeAgentIndex(trx, row);
  await stampAgentChange(trx, row.did);
}

const INDEXED_MEMBERS = ['name', 'description', 'capabilities', 'tags'] as const;

/**
 * updateActiveAgent, plus the search index in the same transaction when an indexed member changes,
 * and the agent's place in the change feed.
 */
export async function updateIndexedAgent(db: Db, did: string, patch: AgentPatch): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await updateActiveAgent(trx, did, patch);
    if (!updated) return false;
    if (INDEXED_MEMBERS.some((member) => patch[member] !== undefined)) {
      const row = await findAgent(trx, did);
      if (row !== undefined) await writeAgentIndex(trx, row);
    }
    await stampAgentChange(trx, did);
    return true;
  });
}

export async function countActiveAgents(db: Db): Promise<number> {
  const row = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
