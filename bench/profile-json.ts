/**
 * The registry's GET profile answer, built by the two reference servers (baseline-server.ts,
 * fastify-floor-server.ts) from one read of the agents row: the registry's own profile columns, its own
 * profile builder (toAgentProfile), its own answer for an agent never called and never observed. No
 * member of the profile is written here, so a member added to the registry's profile is in theirs too;
 * reference-answers.ts, bench/test/reference-servers.test.ts and the GET profile scenario check that
 * the three answer alike.
 */
import {
  PROFILE_COLUMNS,
  ServiceRecordService,
  deriveAvailability,
  toAgentProfile,
  type AgentProfile,
  type AgentProfileRow,
} from '@agent-registry/testkit/server-internals';

/** The row the reference servers read: the profile's columns, and whether the registry has evidence of calls or workers. */
export type ReferenceProfileRow = AgentProfileRow & {
  /** 0 or 1 on SQLite, a boolean on PostgreSQL. */
  has_service_record: number | boolean;
  has_presence: number | boolean;
};

/**
 * As the registry reads a profile (modules/agents/agents-store.ts, findAgentProfile): the row, whether
 * it has service totals, and whether it was ever observed (presence or an answered probe).
 */
const PROFILE_QUERY =
  `select ${PROFILE_COLUMNS.join(', ')}, ` +
  `exists (select 1 from service_totals where service_totals.did = agents.did) as has_service_record, ` +
  `(exists (select 1 from agent_presence where agent_presence.did = agents.did) or exists (select 1 from webhook_probes where webhook_probes.did = agents.did and webhook_probes.last_probed_at is not null)) as has_presence ` +
  `from agents where did = ?`;

/**
 * The service record of an agent never called through the registry, from the registry's own service.
 * `none()` reads none of the service's dependencies, so it is called without them; should it ever read
 * one, the reference servers fail as they start, and the test of the reference servers says so.
 */
const NO_CALLS = ServiceRecordService.prototype.none();

/** The profile of an agent the registry never called or observed, as the registry builds it. */
export function referenceProfile(row: AgentProfileRow, publicUrl: string): AgentProfile {
  const availability = deriveAvailability(
    {
      status: row.status,
      invocation_enabled: row.invocation_enabled === 1,
      delivery_mode: row.delivery_mode,
      webhook_probes: row.webhook_probes === 1,
    },
    undefined,
    Date.now(),
  );
  return toAgentProfile(row, publicUrl, NO_CALLS, availability);
}

/**
 * Only agents never called and never observed (every seeded agent): the profile of any other needs
 * reads the reference servers do not make, so they refuse it (a 500) rather than answer it wrong.
 */
function unobservedOnly(did: string, row: ReferenceProfileRow | undefined): AgentProfileRow | undefined {
  if (row === undefined) return undefined;
  if (Boolean(row.has_service_record) || Boolean(row.has_presence))
    throw new Error(
      `${did} has a service record or was observed: the reference servers answer only unobserved agents`,
    );
  return row;
}

/** One lookup by DID, on SQLite (one prepared statement) or PostgreSQL (one named query, pool of 10). */
export async function agentLookup(
  databaseUrl: string,
): Promise<(did: string) => Promise<AgentProfileRow | undefined>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3');
    const sqlite = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true });
    sqlite.pragma('journal_mode = WAL');
    const statement = sqlite.prepare<[string], ReferenceProfileRow>(PROFILE_QUERY);
    return async (did) => unobservedOnly(did, statement.get(did));
  }
  const { default: pg } = await import('pg');
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const text = PROFILE_QUERY.replace('?', '$1');
  return async (did) =>
    unobservedOnly(
      did,
      (await pool.query<ReferenceProfileRow>({ name: 'agent', text, values: [did] })).rows[0],
    );
}
