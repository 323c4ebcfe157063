/**
 * The registry's GET profile answer built straight from an agents row: the same members, in the same
 * order, with the same values as the registry's AgentProfile (services/agent-view.ts). Shared by the
 * two reference servers (baseline-server.ts, fastify-floor-server.ts).
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
}

export const PROFILE_COLUMNS =
  'did, name, description, avatar, website, public_key, key_type, chain_id, capabilities, tags, status, ' +
  'invocation_enabled, delivery_mode, average_rating, reputation_score, total_reviews, created_at, updated_at';

export function profileJson(row: AgentRow, publicUrl: string): unknown {
  const invocationEnabled = row.invocation_enabled === 1;
  const endpoints = [{ type: 'did_document', url: `${publicUrl}/api/did/${encodeURIComponent(row.did)}` }];
  if (invocationEnabled && row.delivery_mode !== 'none' && row.status === 'active') {
    endpoints.push({ type: 'invoke', url: `${publicUrl}/api/invoke` });
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
  };
}

/** One lookup by DID, on SQLite (one prepared statement) or PostgreSQL (one named query, pool of 10). */
export async function agentLookup(
  databaseUrl: string,
): Promise<(did: string) => Promise<AgentRow | undefined>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3');
    const sqlite = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true });
    sqlite.pragma('journal_mode = WAL');
    const statement = sqlite.prepare<[string], AgentRow>(
      `select ${PROFILE_COLUMNS} from agents where did = ?`,
    );
    return async (did) => statement.get(did);
  }
  const { default: pg } = await import('pg');
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const text = `select ${PROFILE_COLUMNS} from agents where did = $1`;
  return async (did) => (await pool.query<AgentRow>({ name: 'agent', text, values: [did] })).rows[0];
}
