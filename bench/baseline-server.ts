/**
 * The baseline: the least a server on this stack can do to answer GET /api/agents/{did} from the same
 * database with the same JSON as the registry's profile (same members, same order, same values).
 * node:http, one prepared statement (better-sqlite3) or one named query (pg), JSON.stringify.
 * No framework, validation, logging, request ids or CORS.
 *
 *   node --import tsx bench/baseline-server.ts <DATABASE_URL> <port> <public url>
 */
import http from 'node:http';
import { agentLookup, referenceProfile } from './profile-json.js';

const [databaseUrl, portText, publicUrl] = process.argv.slice(2);
if (databaseUrl === undefined || portText === undefined || publicUrl === undefined) {
  console.error('usage: baseline-server.ts <DATABASE_URL> <port> <public url>');
  process.exit(2);
}
const findAgent = await agentLookup(databaseUrl);
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
      send(response, 200, JSON.stringify(referenceProfile(row, publicUrl)));
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
