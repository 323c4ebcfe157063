import { sql, type ExpressionBuilder, type Insertable, type Selectable, type Updateable } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import type { Db } from '../../db/connect.js';
import type { AgentsTable, DatabaseSchema } from '../../db/schema/index.js';

export type AgentRow = Selectable<AgentsTable>;
export type NewAgentRow = Insertable<AgentsTable>;
export type AgentPatch = Updateable<AgentsTable>;

export async function insertAgent(db: Db, row: NewAgentRow): Promise<void> {
  await db.insertInto('agents').values(row).execute();
}

/** Every column a registration writes, in the order of the compiled insert's parameters. */
const REGISTERED_COLUMNS = [
  'did',
  'key_type',
  'public_key',
  'key_id',
  'chain_id',
  'name',
  'description',
  'avatar',
  'website',
  'capabilities',
  'tags',
  'status',
  'invocation_enabled',
  'delivery_mode',
  'webhook_url',
  'webhook_secret',
  'referrer',
  'average_rating',
  'reputation_score',
  'total_reviews',
  'created_at',
  'updated_at',
  'deactivated_at',
] as const satisfies readonly (keyof NewAgentRow)[];

/** A new agent as registration stores it: every column it writes, none left to a default. */
export type RegisteredAgentRow = {
  [K in (typeof REGISTERED_COLUMNS)[number]]-?: Exclude<NewAgentRow[K], undefined>;
};

/** One placeholder per column, so that the compiled insert's parameters can be checked against them. */
const REGISTERED_PLACEHOLDERS: unknown[] = REGISTERED_COLUMNS.map((column) => `\u0000${column}`);

/**
 * The registration insert, compiled once per database handle: compiling costs more than inserting
 * (docs/decisions/performance.md, "Registration insert"). With `feedSeq`, the row takes the change feed's
 * next number in the same statement (SQLite: one writer, so its order is the commit order); the caller moves
 * the head after it.
 */
const insertRegistered = (feedSeq: boolean) =>
  compiledOnce(
    (db, ...placeholders: unknown[]) =>
      db.insertInto('agents').values({
        // The placeholders stand for values of every column's type; Kysely only carries them.
        ...(Object.fromEntries(
          REGISTERED_COLUMNS.map((column, index) => [column, placeholders[index]]),
        ) as RegisteredAgentRow),
        ...(feedSeq ? { change_seq: sql<number>`(select seq + 1 from change_feed_head where id = 1)` } : {}),
      }),
    REGISTERED_PLACEHOLDERS,
  );
const insertRegisteredRow = insertRegistered(false);
const insertRegisteredRowWithFeedSeq = insertRegistered(true);

/** Inserts a registered agent; `withFeedSeq`: also its change feed number (see insertRegistered). */
export async function insertRegisteredAgent(
  db: Db,
  row: RegisteredAgentRow,
  withFeedSeq: boolean,
): Promise<void> {
  const values = REGISTERED_COLUMNS.map((column) => row[column]);
  await (withFeedSeq ? insertRegisteredRowWithFeedSeq : insertRegisteredRow)(db, ...values);
}

const agentByDid = compiledOnce(
  (db, did: string) => db.selectFrom('agents').selectAll().where('did', '=', did),
  ['\u0000did'] as const,
);

export async function findAgent(db: Db, did: string): Promise<AgentRow | undefined> {
  return (await agentByDid(db, did))[0];
}

/** The columns of a public profile (not the webhook secret, referrer or search summary). */
export const PROFILE_COLUMNS = [
  'did',
  'name',
  'description',
  'avatar',
  'website',
  'public_key',
  'key_type',
  'chain_id',
  'capabilities',
  'tags',
  'status',
  'invocation_enabled',
  'delivery_mode',
  'webhook_probes',
  'average_rating',
  'reputation_score',
  'total_reviews',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof AgentsTable)[];

export type AgentProfileRow = Pick<AgentRow, (typeof PROFILE_COLUMNS)[number]>;

const serviceRecordExists = (eb: ExpressionBuilder<DatabaseSchema, 'agents'>) =>
  eb
    .exists(eb.selectFrom('service_totals').select('did').whereRef('service_totals.did', '=', 'agents.did'))
    .as('has_service_record');

/** Whether the registry ever observed the agent: a worker or webhook seen, or a probe answered or failed. */
const presenceExists = (eb: ExpressionBuilder<DatabaseSchema, 'agents'>) =>
  eb
    .or([
      eb.exists(
        eb.selectFrom('agent_presence').select('did').whereRef('agent_presence.did', '=', 'agents.did'),
      ),
      eb.exists(
        eb
          .selectFrom('webhook_probes')
          .select('did')
          .whereRef('webhook_probes.did', '=', 'agents.did')
          .where('webhook_probes.last_probed_at', 'is not', null),
      ),
    ])
    .as('has_presence');

/** Whether a key recovery is pending (migration 023): most agents have none, so no second read for them. */
const pendingRecoveryExists = (eb: ExpressionBuilder<DatabaseSchema, 'agents'>) =>
  eb
    .exists(
      eb
        .selectFrom('key_recovery')
        .select('did')
        .whereRef('key_recovery.did', '=', 'agents.did')
        .where('key_recovery.pending_due_at', 'is not', null),
    )
    .as('has_pending_recovery');

/** Whether the agent holds a verified domain (migration 026): most hold none, so no second read for them. */
const domainExists = (eb: ExpressionBuilder<DatabaseSchema, 'agents'>) =>
  eb
    .exists(eb.selectFrom('agent_domains').select('did').whereRef('agent_domains.did', '=', 'agents.did'))
    .as('has_domains');

const profileByDid = compiledOnce(
  (db, did: string) =>
    db
      .selectFrom('agents')
      .select(PROFILE_COLUMNS)
      .select('change_seq')
      .select(serviceRecordExists)
      .select(presenceExists)
      .select(pendingRecoveryExists)
      .select(domainExists)
      .where('did', '=', did),
  ['\u0000did'] as const,
);

/**
 * A profile row, its change number (every write to a profile column takes a new one), whether it has a
 * service record and whether the registry has observed its workers (both move without a new number).
 */
export type VersionedProfileRow = AgentProfileRow & {
  change_seq: number | null;
  has_service_record: boolean;
  has_presence: boolean;
  has_pending_recovery: boolean;
  has_domains: boolean;
};

/** The agent, and whether it has any service record (most agents have none: no second read for them). */
export async function findAgentProfile(db: Db, did: string): Promise<VersionedProfileRow | undefined> {
  const row = (await profileByDid(db, did))[0];
  if (row === undefined) return undefined;
  // SQLite answers 0 or 1, PostgreSQL a boolean; int8 arrives as a number (db/connect.ts); the row is
  // ours to change (a fresh object per read).
  row.has_service_record = Boolean(row.has_service_record);
  row.has_presence = Boolean(row.has_presence);
  row.has_pending_recovery = Boolean(row.has_pending_recovery);
  row.has_domains = Boolean(row.has_domains);
  return row as VersionedProfileRow;
}

const versionByDid = compiledOnce(
  (db, did: string) =>
    db
      .selectFrom('agents')
      .select('change_seq')
      .select(serviceRecordExists)
      .select(presenceExists)
      .where('did', '=', did),
  ['\u0000did'] as const,
);

/** What a cached profile is checked against: two columns of the agent's row instead of the profile's eighteen. */
export async function findAgentVersion(
  db: Db,
  did: string,
): Promise<{ change_seq: number | null; has_service_record: boolean; has_presence: boolean } | undefined> {
  const row = (await versionByDid(db, did))[0];
  if (row === undefined) return undefined;
  return {
    change_seq: row.change_seq,
    has_service_record: Boolean(row.has_service_record),
    has_presence: Boolean(row.has_presence),
  };
}

const activeAgentByDid = compiledOnce(
  (db, did: string) =>
    db.selectFrom('agents').selectAll().where('did', '=', did).where('status', '=', sql.lit('active')),
  ['\u0000did'] as const,
);

export async function findActiveAgent(db: Db, did: string): Promise<AgentRow | undefined> {
  return (await activeAgentByDid(db, did))[0];
}

const statusByDid = compiledOnce(
  (db, did: string) => db.selectFrom('agents').select('status').where('did', '=', did),
  ['\u0000did'] as const,
);

export async function findAgentStatus(db: Db, did: string): Promise<AgentRow['status'] | undefined> {
  return (await statusByDid(db, did))[0]?.status;
}

const authStateByDid = compiledOnce(
  (db, did: string) => db.selectFrom('agents').select(['status', 'key_generation']).where('did', '=', did),
  ['\u0000did'] as const,
);

/** What a bearer token is checked against: the agent's status and the generation of its key. */
export async function findAgentAuthState(
  db: Db,
  did: string,
): Promise<{ status: AgentRow['status']; key_generation: number } | undefined> {
  const row = (await authStateByDid(db, did))[0];
  return row === undefined ? undefined : { status: row.status, key_generation: Number(row.key_generation) };
}

/** Applies a patch to an active agent; returns false when no active agent has that DID. */
export async function updateActiveAgent(db: Db, did: string, patch: AgentPatch): Promise<boolean> {
  const result = await db
    .updateTable('agents')
    .set(patch)
    .where('did', '=', did)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
