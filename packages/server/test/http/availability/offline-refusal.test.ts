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

type Json = Record<string, unknown>;

describe('an invocation refused because the agent is offline says so, machine-readably, on every face', () => {
  let registry: ListeningRegistry;
  let stopped: QueueWorker;
  let neverPolled: QueueWorker;
  let caller: Registered;
  let lastSeen: string;
  let mcp: Client;

  before(async () => {
    registry = await startListeningRegistry();
    stopped = await queueWorker(registry, { name: 'Stopped', capabilities: [{ type: 'text.echo/v1' }] });
    neverPolled = await queueWorker(registry, { name: 'Never polled', capabilities: [{ type: 'echo' }] });
    caller = await register(registry);
    lastSeen = new Date(registry.clock.now()).toISOString();
    assert.equal((await http(registry, 'GET', '/api/agent/tasks?wait=0', stopped.token)).status, 200);
    registry.clock.advance(ONLINE_WINDOW_MS + 60_000);
    mcp = new Client({ name: 'offline-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${registry.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${caller.token}` } },
      }),
    );
  });
  after(async () => {
    await mcp?.close();
    await registry?.close();
  });

  test('REST: 504 INVOCATION_TIMEOUT as the interface fixes, with offline_since and a search for an online agent', async () => {
    const response = await http(registry, 'POST', '/api/invoke', caller.token, {
      target_did: stopped.did,
      capability: 'text.echo/v1',
      input: {},
      timeout_ms: 1000,
    });
    assert.equal(response.status, 504);
    assert.equal(response.body.code, 'INVOCATION_TIMEOUT');
    assert.equal(response.body.offline_since, lastSeen);
    const details = String(response.body.details);
    assert.match(details, /the task was not sent and will not be answered/);
    assert.ok(details.includes('GET /api/agents/search?capability=text.echo%2Fv1&available=true'), details);
    assert.doesNotMatch(details, /not delivered and/);
  });

  test('a task that was sent and timed out carries no offline_since', async () => {
    const response = await http(registry, 'POST', '/api/invoke', caller.token, {
      target_did: neverPolled.did,
      capability: 'echo',
      input: {},
      timeout_ms: 1000,
    });
    assert.equal(response.status, 504);
    assert.equal(response.body.code, 'INVOCATION_TIMEOUT');
    assert.equal('offline_since' in response.body, false);
  });

  test('MCP invoke_agent: a tool error saying it was not sent, with _meta offline_since', async () => {
    const result = (await mcp.callTool({
      name: 'invoke_agent',
      arguments: { target_did: stopped.did, capability: 'text.echo/v1', input: {}, timeout_ms: 1000 },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.equal(result._meta?.['agent-registry/offline_since'], lastSeen);
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    assert.match(text, /^INVOCATION_TIMEOUT: the invocation was not sent \(task /);
    assert.match(text, /search_agents with capability "text\.echo\/v1" and available true/);
  });

  test('A2A message/send: a failed task whose metadata has offline_since', async () => {
    const response = await fetch(`${registry.url}/a2a/${encodeURIComponent(stopped.did)}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm1',
            role: 'user',
            parts: [{ kind: 'data', data: {} }],
            metadata: { capability: 'text.echo/v1' },
          },
          configuration: { blocking: true },
        },
      }),
    });
    const rpc = (await response.json()) as { result?: { status: Json; metadata: Json } };
    assert.equal(rpc.result?.status.state, 'failed', JSON.stringify(rpc));
    assert.equal(rpc.result?.metadata.offline_since, lastSeen, JSON.stringify(rpc));
  });
});
