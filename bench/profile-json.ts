/**
 * The registry's GET profile answer built straight from an agents row: the same members, in the same
 * order, with the same values as the registry's AgentProfile (modules/agents/agent-view.ts), after the same
 * read: one statement for the agent's row and whether it has service totals. Shared by the two
 * reference servers (baseline-server.ts, fastify-floor-server.ts).
 */
export interface AgentRow {
  did: string;
  name: string;
  description: string | null;
  avatar: string | null;
  website: string | null;
  public_key: string;
  key_type: string;
  chain_id: string | null;
  capabilities: string;
  tags: string;
  status: string;
  invocation_enabled: number;
  delivery_mode: string;
  average_rating: number;
  reputation_score: number;
  total_reviews: number;
  created_at: number | string;
  updated_at: number | string;
  /** Whether the agent has service totals (0 or 1 on SQLite, a boolean on PostgreSQL). */
  has_calls?: number | boolean;
}

export const PROFILE_COLUMNS =
  'did, name, description, avatar, website, public_key, key_type, chain_id, capabilities, tags, status, ' +
  'invocation_enabled, delivery_mode, average_rating, reputation_score, total_reviews, created_at, updated_at';

/**
 * As the registry reads a profile (modules/agents/agents-store.ts, findAgentProfile): the row, whether
 * it has service totals, and whether it was ever observed (presence or an answered probe).
 */
const PROFILE_QUERY =
  `select ${PROFILE_COLUMNS}, exists (select 1 from service_totals where service_totals.did = agents.did) as has_calls, ` +
  `(exists (select 1 from agent_presence where agent_presence.did = agents.did) or exists (select 1 from webhook_probes where webhook_probes.did = agents.did and webhook_probes.last_probed_at is not null)) as has_presence ` +
  `from agents where did = ?`;

export function profileJson(row: AgentRow, publicUrl: string): unknown {
  const invocationEnabled = row.invocation_enabled === 1;
  const did = encodeURIComponent(row.did);
  const endpoints = [{ type: 'did_document', url: `${publicUrl}/api/did/${did}` }];
  if (row.status === 'active') {
    endpoints.push({ type: 'a2a_agent_card', url: `${publicUrl}/a2a/${did}/.well-known/agent-card.json` });
  }
  if (invocationEnabled && row.delivery_mode !== 'none' && row.status === 'active') {
    endpoints.push({ type: 'invoke', url: `${publicUrl}/api/invoke` });
    endpoints.push({ type: 'mcp', url: `${publicUrl}/mcp/agents/${did}` });
  }
  return {
    did: row.did,
    name: row.name,
    description: row.description,
    avatar: row.avatar,
    website: row.website,
    public_key: row.public_key,
    key_type: row.key_type,
    chain_id: row.chain_id,
    capabilities: JSON.parse(row.capabilities) as unknown,
    tags: JSON.parse(row.tags) as unknown,
    endpoints,
    status: row.status,
    invocation_enabled: invocationEnabled,
    delivery_mode: row.delivery_mode,
    average_rating: row.average_rating,
    reputation_score: row.reputation_score,
    total_reviews: row.total_reviews,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    service_record: NO_CALLS_RECORD,
    availability: NEVER_OBSERVED,
  };
}

const window = (days: number) => ({
  days,
  invocations: 0,
  completed: 0,
  failed: 0,
  timeouts: 0,
  success_rate: null,
  timeout_rate: null,
  latency_p50_ms: null,
  latency_p95_ms: null,
  distinct_callers: 0,
  last_completed_at: null,
});

/**
 * The service record of an agent never called through the registry (every seeded agent): the
 * registry learns from the profile's own statement that it has no totals and answers this.
 */
const NO_CALLS_RECORD = {
  measured_by: 'registry',
  last_7_days: window(7),
  last_30_days: window(30),
  all_time: {
    invocations: 0,
    completed: 0,
    failed: 0,
    timeouts: 0,
    success_rate: null,
    last_completed_at: null,
  },
  capabilities: [],
  uptime_24h: null,
  uptime_7d: null,
};

/** The availability of an agent never observed (every seeded agent): a constant, read from the same statement. */
const NEVER_OBSERVED = {
  status: 'unknown',
  last_seen_at: null,
  checked_at: null,
  online_since: null,
  uptime_24h: null,
  uptime_7d: null,
};

function seededOnly(did: string, row: AgentRow | undefined): AgentRow | undefined {
  if (row?.has_calls === 1 || row?.has_calls === true)
    throw new Error(`${did} has calls: not a seeded agent`);
  return row;
}

/** One lookup by DID, on SQLite (one prepared statement) or PostgreSQL (one named query, pool of 10). */
export async function agentLookup(
  databaseUrl: string,
): Promise<(did: string) => Promise<AgentRow | undefined>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3');
    const sqlite = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true });
    sqlite.pragma('journal_mode = WAL');
    const statement = sqlite.prepare<[string], AgentRow>(PROFILE_QUERY);
    return async (did) => seededOnly(did, statement.get(did));
  }
  const { default: pg } = await import('pg');
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const text = PROFILE_QUERY.replace('?', '$1');
  return async (did) =>
    seededOnly(did, (await pool.query<AgentRow>({ name: 'agent', text, values: [did] })).rows[0]);
}
