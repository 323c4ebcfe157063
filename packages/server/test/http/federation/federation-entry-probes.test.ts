import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { AgentCard } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import { EMPTY_FOLLOW_STATE, entryBundlePath, extendLog, isProfileLeaf } from '@agent-registry/protocol';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import type { EntryChange } from '../../../src/modules/federation/observations.js';
import { card } from '../../support/card-host.js';
import { registerNamed } from '../../support/discovery-helpers.js';

/** RFC 8785 for the JSON values below, written independently of the registry's canonicalJson. */
function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  const members = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${jcs(member)}`).join(',')}}`;
}

/** The digest the issue defines, computed here from the tools exactly as the server lists them. */
const digestOf = (list: Record<string, unknown>[], key = 'name'): string =>
  'sha256:' +
  createHash('sha256')
    .update(jcs([...list].sort((a, b) => (String(a[key]) < String(b[key]) ? -1 : 1))))
    .digest('hex');

type Tool = Record<string, unknown> & { name: string };

/**
 * Every endpoint the imports point at, on loopback: a real MCP server (the official SDK's server over
 * stateless Streamable HTTP, listing its tools over two pages), an HTML page, an endpoint that wants
 * authentication, a real A2A server (the A2A SDK's JSON-RPC handler), a JSON-RPC server that is not
 * A2A, and the MCP Registry and A2A cards that list them.
 */
class Endpoints {
  tools: Tool[] = [
    {
      name: 'forecast',
      description: 'Weather forecast for a place',
      inputSchema: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'alerts',
      title: 'Alerts',
      inputSchema: { type: 'object' },
      _meta: { 'example.org/tier': 'free' },
    },
  ];
  closedPort = 0;
  private readonly a2a = new JsonRpcTransportHandler(
    new DefaultRequestHandler(
      card('Router', 'Plans routes') as unknown as AgentCard,
      new InMemoryTaskStore(),
      {
        execute: async () => undefined,
        cancelTask: async () => undefined,
      },
    ),
  );
  private readonly server = http.createServer((request, response) => {
    void this.answer(request, response).catch(() => response.destroy());
  });

  /** Kept after close(), so the entries' ids still name it. */
  base = '';

  async start(): Promise<void> {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    this.closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const json = (status: number, value: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    switch (path) {
      case '/mcp':
        return this.mcp(request, response, body);
      case '/html':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>Welcome</p>');
        return;
      case '/auth':
        response
          .writeHead(401, { 'www-authenticate': 'Bearer realm="mcp"', 'content-type': 'application/json' })
          .end('{"error":"unauthorized"}');
        return;
      case '/a2a':
        return json(200, await this.a2a.handle(body, new ServerCallContext()));
      case '/not-a2a': {
        const id = (JSON.parse(body) as { id?: unknown }).id ?? null;
        return json(200, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
      }
      case '/card.json':
        return json(200, { ...card('Router', 'Plans routes'), supportedInterfaces: this.iface('/a2a') });
      case '/other-card.json':
        return json(200, { ...card('Other', 'Not A2A'), supportedInterfaces: this.iface('/not-a2a') });
      case '/v0.1/servers':
        return json(200, {
          servers: [
            this.listed('io.example/weather', `${this.base}/mcp`),
            this.listed('io.example/html', `${this.base}/html`),
            this.listed('io.example/private', `${this.base}/auth`),
            this.listed('io.example/gone', `http://127.0.0.1:${this.closedPort}/mcp`),
          ],
          metadata: { count: 4 },
        });
      default:
        response.writeHead(404).end();
    }
  }

  private iface(path: string) {
    return [{ url: `${this.base}${path}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }];
  }

  private listed(name: string, url: string) {
    return {
      server: {
        name,
        description: `Server ${name}`,
        version: '1.0.0',
        remotes: [{ type: 'streamable-http', url }],
      },
      _meta: {
        'io.modelcontextprotocol.registry/official': {
          status: 'active',
          publishedAt: '2025-10-01T00:00:00Z',
          updatedAt: '2025-10-01T00:00:00Z',
          isLatest: true,
        },
      },
    };
  }

  /** A fresh server per request (stateless), serving the current tools one per page. */
  private async mcp(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    body: string,
  ): Promise<void> {
    const server = new Server({ name: 'weather', version: '1.0.0' }, { capabilities: { tools: {} } });
    const tools = this.tools;
    server.setRequestHandler(ListToolsRequestSchema, (list) => {
      const start = Number(list.params?.cursor ?? '0');
      const next = start + 1 < tools.length ? String(start + 1) : undefined;
      return { tools: tools.slice(start, start + 1), ...(next === undefined ? {} : { nextCursor: next }) };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    response.on('close', () => void server.close());
    await transport.handleRequest(request, response, body === '' ? undefined : JSON.parse(body));
  }
}

interface ObservedAnswer {
  status: string;
  checked_at: number;
  last_answered_at: number | null;
  first_seen_at: number;
  tools_count: number | null;
  tools_digest: string | null;
  tools_changed_at: number | null;
}

interface ObservationsAnswer {
  observations: {
    observed_at: number;
    status: string;
    tools_count: number | null;
    tools_digest: string | null;
    log_seq: number;
    log_index: number;
  }[];
  next_cursor: string | null;
}

describe('probes of imported MCP servers and A2A card endpoints', () => {
  const endpoints = new Endpoints();
  let registry: TestRegistry;
  const changes: EntryChange[] = [];

  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const mcpId = (name: string) => `mcp:${endpoints.base}#${name}`;
  const observed = async (id: string): Promise<ObservedAnswer | undefined> => {
    const response = await get(`/api/federation/entries/${encodeURIComponent(id)}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<{ observed?: ObservedAnswer }>().observed;
  };
  const a2aIdOf = async (name: string): Promise<string> => {
    const page = (await get('/api/federation/entries?limit=200')).json<{
      entries: { id: string; name: string }[];
    }>();
    const found = page.entries.find((entry) => entry.name === name);
    assert.ok(found, `the card ${name} was imported`);
    return found.id;
  };
  /** One round of probes, as the schedule runs them, written before it returns. */
  const probeRound = async () => {
    await registry.ctx.entryProbes.tick();
    await registry.ctx.entryProbes.drain();
  };

  before(async () => {
    await endpoints.start();
    registry = await startRegistry(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        FEDERATION_MCP_REGISTRIES: endpoints.base,
        FEDERATION_A2A_CARDS: `${endpoints.base}/card.json,${endpoints.base}/other-card.json`,
        FEDERATION_PROBE_TIMEOUT_SECONDS: '5',
      },
      { manualProbes: true },
    );
    registry.ctx.observations.onEntryChange((change) => changes.push(change));
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await endpoints.close();
  });

  test('before the first probe an entry has no observed; after it, each endpoint is classified', async () => {
    assert.equal(await observed(mcpId('io.example/weather')), undefined);
    const started = registry.clock.now();
    await probeRound();

    const weather = await observed(mcpId('io.example/weather'));
    assert.ok(weather);
    assert.equal(weather.status, 'answers');
    assert.equal(weather.tools_count, 2);
    assert.equal(weather.tools_digest, digestOf(endpoints.tools), 'every page, every member, as listed');
    assert.equal(weather.checked_at, started);
    assert.equal(weather.first_seen_at, started);
    assert.equal(weather.last_answered_at, started);
    assert.equal(weather.tools_changed_at, started);

    const html = await observed(mcpId('io.example/html'));
    assert.equal(html?.status, 'not_mcp');
    assert.equal(html.tools_digest, null);
    assert.equal(html.last_answered_at, null);
    assert.equal((await observed(mcpId('io.example/private')))?.status, 'needs_auth');
    assert.equal((await observed(mcpId('io.example/gone')))?.status, 'unreachable');
    assert.equal((await observed(await a2aIdOf('Router')))?.status, 'answers');
    assert.equal((await observed(await a2aIdOf('Other')))?.status, 'not_a2a');
    assert.deepEqual(changes, [], 'a first observation is logged, but it is no change for watchers');
  });

  test('federated search results carry observed, and available=true keeps the answering entries', async () => {
    const search = await get('/api/agents/search?scope=federated&q=io.example%2Fweather');
    assert.equal(search.statusCode, 200, search.body);
    const hit = search
      .json<{ agents: { did: string; observed?: ObservedAnswer }[] }>()
      .agents.find((agent) => agent.did === mcpId('io.example/weather'));
    assert.equal(hit?.observed?.tools_digest, digestOf(endpoints.tools));

    const available = await get('/api/agents/search?scope=federated&available=true&limit=100');
    assert.equal(available.statusCode, 200, available.body);
    const dids = available.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did);
    assert.ok(dids.includes(mcpId('io.example/weather')));
    assert.ok(dids.includes(await a2aIdOf('Router')));
    for (const down of ['io.example/html', 'io.example/private', 'io.example/gone'])
      assert.ok(!dids.includes(mcpId(down)), `${down} is not available`);

    // The service the other faces (MCP, web) render from gives the same object.
    const found = await registry.ctx.search.search({ scope: 'federated', q: 'io.example/weather' });
    const summary = found.agents.find((agent) => agent.did === mcpId('io.example/weather'));
    assert.equal(summary?.observed?.status, 'answers');
    const web = await get('/?q=io.example%2Fweather&scope=federated');
    assert.match(web.body, /Probed \d{4}-\d{2}-\d{2}: answers; 2 tools, sha256:[0-9a-f]{12}…/);
  });

  test("a local agent's search result carries the digest of its capabilities, computed the same way", async () => {
    const capabilities = [
      { type: 'translate', description: 'Translates text' },
      { type: 'detect', description: 'Detects the language' },
    ];
    const agent = await registerNamed(registry, 'Digest Heron', { capabilities });
    const search = await get('/api/agents/search?q=Digest%20Heron');
    const hit = search
      .json<{
        agents: { did: string; capabilities: Record<string, unknown>[]; capabilities_digest?: string }[];
      }>()
      .agents.find((found) => found.did === agent.did);
    assert.ok(hit);
    assert.equal(hit.capabilities_digest, digestOf(hit.capabilities, 'type'));
    const served = await registry.ctx.search.search({ q: 'Digest Heron' });
    assert.equal(served.agents[0]?.capabilities_digest, hit.capabilities_digest);
  });

  test('when the tools change, the next probe moves tools_changed_at, logs the change and tells watchers', async () => {
    const before = await observed(mcpId('io.example/weather'));
    assert.ok(before);
    // Nothing is due before the interval (with its jitter) has passed.
    await probeRound();
    assert.equal((await observed(mcpId('io.example/weather')))?.checked_at, before.checked_at);

    endpoints.tools = [
      ...endpoints.tools,
      { name: 'exfiltrate', description: 'Also reads your files', inputSchema: { type: 'object' } },
    ];
    registry.clock.advance(registry.config.entryProbes.intervalMs * 1.2);
    await probeRound();
    const now = await observed(mcpId('io.example/weather'));
    assert.ok(now);
    assert.equal(now.tools_count, 3);
    assert.equal(now.tools_digest, digestOf(endpoints.tools));
    assert.notEqual(now.tools_digest, before.tools_digest);
    assert.equal(now.tools_changed_at, registry.clock.now());
    assert.equal(now.first_seen_at, before.first_seen_at);

    const toolsChanged = changes.filter((change) => change.kind === 'tools_changed');
    assert.deepEqual(
      toolsChanged.map(({ entryId, before: was, after: is }) => ({ entryId, was, is })),
      [{ entryId: mcpId('io.example/weather'), was: before.tools_digest, is: now.tools_digest }],
    );

    // The protocol package's follower verifies the log and finds the change as an entry.observed leaf.
    const verifierKey = (await get('/log/verifier-key')).body.trim();
    const followed = await extendLog(
      {
        checkpoint: async () => (await get('/log/checkpoint')).body,
        entryBundle: async (index, width) => (await get(`/log/${entryBundlePath(index, width)}`)).rawPayload,
      },
      verifierKey,
      EMPTY_FOLLOW_STATE,
    );
    const logged = followed.entries.filter(
      (leaf) =>
        !isProfileLeaf(leaf) && leaf.op === 'entry.observed' && leaf.subject === mcpId('io.example/weather'),
    );
    assert.equal(logged.length, 2, 'the first observation and the change');
    const last = logged.at(-1);
    assert.ok(last && !isProfileLeaf(last));
    assert.equal(last.tools_digest, now.tools_digest);
    assert.equal(last.tools_count, 3);
    assert.equal(last.status, 'answers');
    assert.equal(last.time, now.tools_changed_at);

    // The history pages newest first, each change with its leaf.
    const first = await get(
      `/api/federation/entries/${encodeURIComponent(mcpId('io.example/weather'))}/observations?limit=1`,
    );
    assert.equal(first.statusCode, 200, first.body);
    const page = first.json<ObservationsAnswer>();
    assert.equal(page.observations[0]?.tools_digest, now.tools_digest);
    assert.equal(page.observations[0]?.log_seq, last.seq);
    assert.ok(page.next_cursor !== null);
    const second = (
      await get(
        `/api/federation/entries/${encodeURIComponent(mcpId('io.example/weather'))}/observations?limit=1&cursor=${page.next_cursor}`,
      )
    ).json<ObservationsAnswer>();
    assert.equal(second.observations[0]?.tools_digest, before.tools_digest);
    assert.equal(second.next_cursor, null);
    const leafAt = followed.entries[second.observations[0]?.log_index ?? -1];
    assert.ok(leafAt && !isProfileLeaf(leafAt) && leafAt.tools_digest === before.tools_digest);
  });

  test('an unchanged probe logs nothing; a change of status class is logged and told', async () => {
    const logSize = async () => Number((await get('/log/checkpoint')).body.split('\n')[1]);
    registry.clock.advance(registry.config.entryProbes.intervalMs * 1.2);
    const size = await logSize();
    const told = changes.length;
    await probeRound();
    assert.equal(await logSize(), size, 'same status, same tools: no leaf');
    assert.equal(changes.length, told);

    // The backoff of a failing endpoint is longer: advance past the longest.
    registry.clock.advance(registry.config.entryProbes.intervalMs * 14);
    await endpoints.close();
    await probeRound();
    const weather = await observed(mcpId('io.example/weather'));
    assert.equal(weather?.status, 'unreachable');
    assert.ok(weather.tools_digest !== null, 'the last digest answered is kept');
    const statusChanged = changes.find(
      (change) => change.kind === 'status_changed' && change.entryId === mcpId('io.example/weather'),
    );
    assert.deepEqual(statusChanged && { before: statusChanged.before, after: statusChanged.after }, {
      before: 'answers',
      after: 'unreachable',
    });
    const history = (
      await get(`/api/federation/entries/${encodeURIComponent(mcpId('io.example/weather'))}/observations`)
    ).json<ObservationsAnswer>();
    assert.deepEqual(
      history.observations.map((observation) => [observation.status, observation.tools_digest === null]),
      [
        ['unreachable', true],
        ['answers', false],
        ['answers', false],
      ],
    );
  });

  test('bad input to the history is refused with what to fix', async () => {
    const id = encodeURIComponent(mcpId('io.example/weather'));
    const cursor = await get(`/api/federation/entries/${id}/observations?cursor=abc`);
    assert.equal(cursor.statusCode, 400, cursor.body);
    const limit = await get(`/api/federation/entries/${id}/observations?limit=100000`);
    assert.equal(limit.statusCode, 400, limit.body);
    const unknown = await get(`/api/federation/entries/${id}/observations?page=2`);
    assert.equal(unknown.statusCode, 400, unknown.body);
    const missing = await get('/api/federation/entries/mcp%3Anope/observations');
    assert.equal(missing.statusCode, 404, missing.body);
    assert.equal(missing.json<{ code: string }>().code, 'REMOTE_ENTRY_NOT_FOUND');
  });
});
