/**
 * The baseline: the least a server on this stack can do to answer GET /api/agents/{did} from the same
 * database with the same JSON as the registry's profile (same members, same order, same values).
 * node:http, one prepared statement (better-sqlite3) or one parameterised query (pg), JSON.stringify.
 * No framework, validation, logging, request ids or CORS.
 *
 *   node --import tsx bench/baseline-server.ts <DATABASE_URL> <port> <public url>
 */
import http from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';

interface AgentRow {
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

const [databaseUrl, portText, publicUrl] = process.argv.slice(2);
if (databaseUrl === undefined || portText === undefined || publicUrl === undefined) {
  console.error('usage: baseline-server.ts <DATABASE_URL> <port> <public url>');
  process.exit(2);
}

const COLUMNS =
  'did, name, description, avatar, website, public_key, key_type, chain_id, capabilities, tags, status, ' +
  'invocation_enabled, delivery_mode, average_rating, reputation_score, total_reviews, created_at, updated_at';

let findAgent: (did: string) => Promise<AgentRow | undefined>;
if (databaseUrl.startsWith('sqlite:')) {
  const sqlite = new Database(databaseUrl.slice('sqlite:'.length), { fileMustExist: true });
  sqlite.pragma('journal_mode = WAL');
  const statement = sqlite.prepare<[string], AgentRow>(`select ${COLUMNS} from agents where did = ?`);
  findAgent = async (did) => statement.get(did);
} else {
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const text = `select ${COLUMNS} from agents where did = $1`;
  findAgent = async (did) => (await pool.query<AgentRow>({ name: 'agent', text, values: [did] })).rows[0];
}

function profile(row: AgentRow): unknown {
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

const PREFIX = '/api/agents/';

function send(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

const server = http.createServer((request, response) => {
  const url = request.url ?? '/';
  if (request.method !== 'GET' || !url.startsWith(PREFIX)) {
    send(response, 404, '{"error":"Not found","details":"no such route","code":"ROUTE_NOT_FOUND"}');
    return;
  }
  let did: string;
  try {
    did = decodeURIComponent(url.slice(PREFIX.length).split('?')[0] as string);
  } catch {
    send(response, 400, '{"error":"Bad request","details":"bad DID","code":"INVALID_DID"}');
    return;
  }
  findAgent(did).then(
    (row) => {
      if (row === undefined) {
        send(response, 404, '{"error":"Agent not found","details":"no agent","code":"AGENT_NOT_FOUND"}');
        return;
      }
      send(response, 200, JSON.stringify(profile(row)));
    },
    (error: unknown) => {
      console.error(error);
      send(response, 500, '{"error":"Internal error","details":"","code":"INTERNAL_ERROR"}');
    },
  );
});
server.keepAliveTimeout = 72_000;
server.listen(Number(portText), '127.0.0.1', () => console.log(`baseline listening on ${portText}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
