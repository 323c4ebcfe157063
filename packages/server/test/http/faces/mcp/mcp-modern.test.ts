import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
  type QueueWorker,
} from '../../../support/faces-helpers.js';

const MODERN = '2026-07-28';
const translateSchema = {
  type: 'object',
  properties: { text: { type: 'string' }, to: { type: 'string', enum: ['fr', 'de'] } },
  required: ['text', 'to'],
  additionalProperties: false,
};

/** The official v2 client, pinned to the stateless revision: no initialize, server/discover first. */
async function connectModern(url: string, token?: string): Promise<Client> {
  const client = new Client(
    { name: 'registry-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  return client;
}

async function connectLegacy(url: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'registry-test', version: '1.0.0' });
  await client.connect(new LegacyTransport(new URL(url)));
  return client;
}

const textOf = (result: CallToolResult): string =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

/** A 2026-07-28 request as the revision's Streamable HTTP binding puts it on the wire. */
function modernPost(
  url: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
}

describe('MCP face, revision 2026-07-28 (official v2 client, beside the 2025 revisions)', () => {
  let registry: ListeningRegistry;
  let caller: Registered;
  let worker: QueueWorker;
  let anonymous: Client;
  let authenticated: Client;

  before(async () => {
    registry = await startListeningRegistry();
    caller = await register(registry);
    worker = await queueWorker(registry, {
      name: 'Modern translator',
      description: 'Translates for clients of either revision',
      capabilities: [
        {
          type: 'translate',
          description: 'Translate text',
          input_schema: translateSchema,
          output_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
      ],
      tags: ['language'],
    });
    anonymous = await connectModern(`${registry.url}/mcp`);
    authenticated = await connectModern(`${registry.url}/mcp`, caller.token);
  });
  after(async () => {
    await anonymous?.close();
    await authenticated?.close();
    await registry?.close();
  });

  test('connects with server/discover: the modern era, the registry named, its instructions', async () => {
    assert.equal(anonymous.getProtocolEra(), 'modern');
    assert.equal(anonymous.getNegotiatedProtocolVersion(), MODERN);
    const discovered = await anonymous.discover();
    assert.ok(discovered.supportedVersions.includes(MODERN), JSON.stringify(discovered.supportedVersions));
    assert.deepEqual(discovered.capabilities.tools, { listChanged: false });
    assert.equal(anonymous.getServerVersion()?.name, 'agent-registry');
    assert.match(anonymous.getInstructions() ?? '', /^An agent registry\. Find agents with search_agents/);
  });

  test('lists exactly the tools, descriptions, schemas and annotations a 2025 client sees', async () => {
    const legacy = await connectLegacy(`${registry.url}/mcp`);
    try {
      const [modern, old] = await Promise.all([anonymous.listTools(), legacy.listTools()]);
      assert.ok(modern.tools.length >= 8);
      assert.deepEqual(modern.tools, old.tools);
    } finally {
      await legacy.close();
    }
  });

  test('search_agents answers the same structured content as on the 2025 revision', async () => {
    const found = await anonymous.callTool({ name: 'search_agents', arguments: { capability: 'translate' } });
    assert.equal(found.isError, undefined, textOf(found));
    const structured = found.structuredContent as { agents: { did: string }[]; total: number };
    assert.equal(structured.total, 1);
    assert.equal(structured.agents[0]!.did, worker.did);
  });

  test('invoke_agent runs a queue-mode agent end to end with the bearer token', async () => {
    const answered = worker.serveOne((input) => ({ text: `${String(input.text)} (${String(input.to)})` }));
    const result = await authenticated.callTool({
      name: 'invoke_agent',
      arguments: { target_did: worker.did, capability: 'translate', input: { text: 'hello', to: 'fr' } },
    });
    const taskId = await answered;
    assert.equal(result.isError, undefined, textOf(result));
    assert.deepEqual(result.structuredContent, {
      task_id: taskId,
      status: 'completed',
      output: { text: 'hello (fr)' },
    });
  });

  test('errors: an unknown tool is -32602 naming the tools; no token is a tool error saying what to send', async () => {
    await assert.rejects(anonymous.callTool({ name: 'no_such_tool', arguments: {} }), (error: Error) => {
      assert.match(error.message, /Unknown tool "no_such_tool"; tools: search_agents, /);
      return true;
    });
    const refused = await anonymous.callTool({
      name: 'invoke_agent',
      arguments: { target_did: worker.did, capability: 'translate', input: { text: 'x', to: 'fr' } },
    });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /^TOKEN_MISSING: invoke_agent acts as a registered agent/);
  });

  test('the per-agent endpoint: discover, its capability tools, and a direct invocation', async () => {
    const url = `${registry.url}/mcp/agents/${encodeURIComponent(worker.did)}`;
    const client = await connectModern(url, caller.token);
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getServerVersion()?.name, 'agent-registry/Modern translator');
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['translate'],
      );
      assert.deepEqual(tools[0]!.inputSchema, translateSchema);
      const answered = worker.serveOne((input) => ({ text: `direct ${String(input.text)}` }));
      const result = await client.callTool({ name: 'translate', arguments: { text: 'hi', to: 'fr' } });
      await answered;
      assert.deepEqual(result.structuredContent, { text: 'direct hi' });
    } finally {
      await client.close();
    }
  });

  test('a wrong token is refused at the HTTP level with 401 before any era is chosen', async () => {
    await assert.rejects(connectModern(`${registry.url}/mcp`, 'not-a-token'), /401/);
  });

  test('raw wire: server/discover needs no initialize and answers the revision, capabilities and serverInfo', async () => {
    const response = await modernPost(`${registry.url}/mcp`, 'server/discover', {});
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(response.headers.get('mcp-session-id'), null);
    const body = (await response.json()) as {
      jsonrpc: string;
      id: number;
      result: {
        supportedVersions: string[];
        capabilities: Record<string, unknown>;
        instructions: string;
        _meta: Record<string, { name: string }>;
      };
    };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, 7);
    assert.ok(body.result.supportedVersions.includes(MODERN));
    assert.deepEqual(body.result.capabilities.tools, { listChanged: false });
    assert.equal(body.result._meta['io.modelcontextprotocol/serverInfo']!.name, 'agent-registry');
    assert.match(body.result.instructions, /search_agents/);
  });

  test('raw wire: tools/call with the envelope is served at once, stateless', async () => {
    const response = await modernPost(`${registry.url}/mcp`, 'tools/call', {
      name: 'search_agents',
      arguments: { capability: 'translate' },
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { result: { structuredContent: { total: number } } };
    assert.equal(body.result.structuredContent.total, 1);
  });

  test('raw wire: a revision the server does not serve is refused naming the supported ones', async () => {
    const response = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2099-01-01',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as {
      error: { code: number; data: { supported: string[]; requested: string } };
    };
    assert.equal(body.error.code, -32022);
    assert.ok(body.error.data.supported.includes(MODERN), JSON.stringify(body.error));
  });

  test('raw wire: a Mcp-Method header that disagrees with the body is refused (400, -32020)', async () => {
    const response = await modernPost(
      `${registry.url}/mcp`,
      'tools/list',
      {},
      { 'mcp-method': 'tools/call' },
    );
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { code: number } };
    assert.equal(body.error.code, -32020);
  });

  test('raw wire: subscriptions/listen is acknowledged with no notifications and closed at once (tools never change)', async () => {
    const response = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    // The whole stream: it ends, so no connection is held open for notifications that never come.
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { method?: string; id?: number; params?: unknown });
    assert.equal(events.length, 2);
    assert.equal(events[0]!.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual((events[0]!.params as { notifications: unknown }).notifications, {});
    assert.equal(events[1]!.id, 3);
  });

  test('raw wire: malformed tools/call params get the same words as on the 2025 revision', async () => {
    const response = await modernPost(`${registry.url}/mcp`, 'tools/call', {
      name: 'search_agents',
      arguments: ['translate'],
    });
    const body = (await response.json()) as { id: number; error: { code: number; message: string } };
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32602);
    assert.equal(
      body.error.message,
      "params.arguments must be a JSON object of the tool's input (see its inputSchema in tools/list), not an array",
    );
  });

  test('raw wire: a foreign browser Origin is refused before the era is chosen', async () => {
    const response = await modernPost(
      `${registry.url}/mcp`,
      'tools/list',
      {},
      { origin: 'https://evil.example' },
    );
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { code: string }).code, 'ORIGIN_NOT_ALLOWED');
  });

  test('raw wire: the 2025 initialize handshake is still answered by the 2025 server', async () => {
    const response = await fetch(`${registry.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { result: { protocolVersion: string } };
    assert.equal(body.result.protocolVersion, '2025-11-25');
  });
});
