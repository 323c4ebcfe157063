import assert from 'node:assert/strict';
import nodeHttp from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../../../../src/kernel/config.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
} from '../../../support/faces-helpers.js';

const APP_ORIGIN = 'https://app.example';

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'origin-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

interface RawAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A POST with exactly these headers (Host included, which fetch will not let a caller choose). */
function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<RawAnswer> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = nodeHttp.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(text)),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}

const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe('MCP endpoints check Origin and Host (DNS rebinding), as the MCP transport requires', () => {
  let registry: ListeningRegistry;
  let agentUrl: string;

  before(async () => {
    registry = await startListeningRegistry({ MCP_ALLOWED_ORIGINS: APP_ORIGIN });
    const worker = await queueWorker(registry, { name: 'Echo', capabilities: [{ type: 'echo' }] });
    agentUrl = `${registry.url}/mcp/agents/${encodeURIComponent(worker.did)}`;
  });
  after(() => registry?.close());

  test('the official client without Origin (not a browser) works on both endpoints', async () => {
    for (const url of [`${registry.url}/mcp`, agentUrl]) {
      const client = await connect(url);
      assert.ok((await client.listTools()).tools.length > 0, url);
      await client.close();
    }
  });

  test('a foreign Origin is refused with 403 on both endpoints, by the official client and raw', async () => {
    for (const url of [`${registry.url}/mcp`, agentUrl]) {
      await assert.rejects(connect(url, { origin: 'http://evil.example' }), /403|ORIGIN_NOT_ALLOWED/);
      const raw = await rawPost(url, { origin: 'http://evil.example' }, listTools);
      assert.equal(raw.status, 403);
      assert.equal(raw.body.code, 'ORIGIN_NOT_ALLOWED');
      assert.match(String(raw.body.details), /MCP_ALLOWED_ORIGINS/);
    }
  });

  test("PUBLIC_URL's origin and MCP_ALLOWED_ORIGINS are let through", async () => {
    for (const origin of [registry.url, APP_ORIGIN]) {
      const client = await connect(`${registry.url}/mcp`, { origin });
      assert.ok((await client.listTools()).tools.length > 0, origin);
      await client.close();
    }
  });

  test("a rebinding page (allowed-looking Origin, the attacker's Host) is refused with 403", async () => {
    const rebound = await rawPost(
      `${registry.url}/mcp`,
      { origin: APP_ORIGIN, host: 'evil.example' },
      listTools,
    );
    assert.equal(rebound.status, 403);
    assert.equal(rebound.body.code, 'HOST_NOT_ALLOWED');
    const both = await rawPost(agentUrl, { origin: 'http://evil.example', host: 'evil.example' }, listTools);
    assert.equal(both.status, 403);
    // Without Origin the Host is not judged: nodes are reached by internal names behind a balancer.
    const internal = await rawPost(`${registry.url}/mcp`, { host: 'node-7.internal:8080' }, listTools);
    assert.equal(internal.status, 200);
  });

  test('an allowed Origin or Host spelled another way (case, trailing slash, default port) is the same origin', async () => {
    const own = new URL(registry.url);
    for (const origin of ['HTTPS://APP.example', `${APP_ORIGIN}/`, `${APP_ORIGIN}:443`, `${registry.url}/`]) {
      const raw = await rawPost(`${registry.url}/mcp`, { origin }, listTools);
      assert.equal(raw.status, 200, origin);
    }
    const upper = await rawPost(
      `${registry.url}/mcp`,
      { origin: APP_ORIGIN, host: own.host.toUpperCase() },
      listTools,
    );
    assert.equal(upper.status, 200);
    // An opaque origin (sandboxed frame, file:) is no origin of ours.
    const opaque = await rawPost(`${registry.url}/mcp`, { origin: 'null' }, listTools);
    assert.equal(opaque.status, 403);
    assert.equal(opaque.body.code, 'ORIGIN_NOT_ALLOWED');
  });

  test('a request with Origin but no Host (HTTP/1.0) is refused with 403, not a server error', async () => {
    const text = JSON.stringify(listTools);
    const { port } = new URL(registry.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.end(
          `POST /mcp HTTP/1.0\r\norigin: ${APP_ORIGIN}\r\ncontent-type: application/json\r\n` +
            `accept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
        );
      });
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.[01] 403/);
    assert.match(answer, /HOST_NOT_ALLOWED/);
  });
});

describe('MCP_ALLOWED_ORIGINS spelled with capitals, a default port or a trailing slash', () => {
  let registry: ListeningRegistry;

  before(async () => {
    registry = await startListeningRegistry({ MCP_ALLOWED_ORIGINS: 'HTTPS://App.Example:443/' });
  });
  after(() => registry?.close());

  test('is the origin it names, and a path is still refused', async () => {
    const raw = await rawPost(`${registry.url}/mcp`, { origin: APP_ORIGIN }, listTools);
    assert.equal(raw.status, 200);
    assert.throws(
      () => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://app.example/path' }),
      /MCP_ALLOWED_ORIGINS must be comma-separated http\(s\) origins/,
    );
  });
});

describe('MCP tools/call with non-object arguments', () => {
  let registry: ListeningRegistry;

  before(async () => {
    registry = await startListeningRegistry();
  });
  after(() => registry?.close());

  test('answers -32602 in the registry words, without validator internals', async () => {
    const cases: [unknown, RegExp][] = [
      ['text', /params\.arguments must be a JSON object .* not a string/],
      [[1, 2], /params\.arguments must be a JSON object .* not an array/],
      [7, /not a number/],
      [null, /not null/],
    ];
    for (const [args, message] of cases) {
      const answer = await rawPost(
        `${registry.url}/mcp`,
        {},
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_agent', arguments: args } },
      );
      assert.equal(answer.status, 200);
      const error = answer.body.error as { code: number; message: string };
      assert.equal(answer.body.id, 5);
      assert.equal(error.code, -32602, JSON.stringify(answer.body));
      assert.match(error.message, message);
      assert.doesNotMatch(error.message, /invalid_type|expected|\[\s*\{/);
    }
    const noParams = await rawPost(
      `${registry.url}/mcp`,
      {},
      { jsonrpc: '2.0', id: 6, method: 'tools/call' },
    );
    assert.equal((noParams.body.error as { code: number }).code, -32602);
  });

  test('well-formed calls still run', async () => {
    const client = await connect(`${registry.url}/mcp`);
    const result = await client.callTool({ name: 'search_agents', arguments: {} });
    assert.notEqual(result.isError, true);
    await client.close();
  });
});
