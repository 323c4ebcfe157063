/**
 * The framework floor: the baseline's work (one prepared statement, the same JSON) inside a bare
 * Fastify 5 app with the registry's logger settings, and nothing else (no schemas, hooks, CORS, ORM).
 * The gap between it and the baseline is what Fastify itself costs on this machine; the gap between
 * the registry and it is what the registry's own layers cost.
 *
 *   node --import tsx bench/fastify-floor-server.ts <DATABASE_URL> <port> <public url>
 */
import Fastify from 'fastify';
import { agentLookup, referenceProfile } from './profile-json.js';

const [databaseUrl, portText, publicUrl] = process.argv.slice(2);
if (databaseUrl === undefined || portText === undefined || publicUrl === undefined) {
  console.error('usage: fastify-floor-server.ts <DATABASE_URL> <port> <public url>');
  process.exit(2);
}
const findAgent = await agentLookup(databaseUrl);
const app = Fastify({ logger: { level: 'warn' }, routerOptions: { maxParamLength: 512 } });
app.get('/api/agents/:did', async (request, reply) => {
  const row = await findAgent((request.params as { did: string }).did);
  if (row === undefined) {
    return reply.status(404).send({ error: 'Agent not found', details: 'no agent', code: 'AGENT_NOT_FOUND' });
  }
  return referenceProfile(row, publicUrl);
});
await app.listen({ port: Number(portText), host: '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
