import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { ONLINE_WINDOW_MS } from '../../../src/modules/availability/availability-model.js';
import { http } from '../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
  type QueueWorker,
} from '../../support/faces-helpers.js';

interface Hit {
  did: string;
  availability: { status: string; last_seen_at: number | null };
}

describe('every search hit carries availability (REST and MCP)', () => {
  let registry: ListeningRegistry;
  let worker: QueueWorker;
  let silent: Registered;
  let polledAt: number;
  let mcp: Client;

  before(async () => {
    registry = await startListeningRegistry();
    worker = await queueWorker(registry, { name: 'Polling echo', capabilities: [{ type: 'echo' }] });
    silent = await register(registry, undefined, { name: 'Silent echo', capabilities: [{ type: 'echo' }] });
    polledAt = registry.clock.now();
    const polled = await http(registry, 'GET', '/api/agent/tasks?wait=0', worker.token);
    assert.equal(polled.status, 200);
    mcp = new Client({ name: 'availability-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${registry.url}/mcp`)));
  });
  after(async () => {
    await mcp?.close();
    await registry?.close();
  });

  const restHits = async (): Promise<Map<string, Hit['availability']>> => {
    const found = await http(registry, 'GET', '/api/agents/search?capability=echo');
    assert.equal(found.status, 200, JSON.stringify(found.body));
    return new Map((found.body.agents as Hit[]).map((hit) => [hit.did, hit.availability]));
  };

  test('GET /api/agents/search: online with the last sighting, unknown and null when never seen', async () => {
    const hits = await restHits();
    assert.deepEqual(hits.get(worker.did), { status: 'online', last_seen_at: polledAt });
    assert.deepEqual(hits.get(silent.did), { status: 'unknown', last_seen_at: null });
  });

  test('MCP search_agents: the same in structured content, and the status in the text', async () => {
    const result = (await mcp.callTool({
      name: 'search_agents',
      arguments: { capability: 'echo' },
    })) as CallToolResult;
    const agents = (result.structuredContent as { agents: Hit[] }).agents;
    const byDid = new Map(agents.map((hit) => [hit.did, hit.availability]));
    assert.deepEqual(byDid.get(worker.did), { status: 'online', last_seen_at: polledAt });
    assert.deepEqual(byDid.get(silent.did), { status: 'unknown', last_seen_at: null });
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
    assert.match(text, new RegExp(`Polling echo \\(${worker.did}; online\\)`));
  });

  test('a worker gone past the online window reads offline in the hits, with its last sighting', async () => {
    registry.clock.advance(ONLINE_WINDOW_MS + 1);
    const hits = await restHits();
    assert.deepEqual(hits.get(worker.did), { status: 'offline', last_seen_at: polledAt });
  });
});
