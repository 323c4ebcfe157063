import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { testDatabase } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import { http } from '../../support/http.js';

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'watch-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const textOf = (result: CallToolResult): string =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

describe(`watches over MCP: the same service as REST (${testDatabase})`, () => {
  let registry: ListeningRegistry;
  let watcher: Registered;
  let target: Registered;
  let client: Client;
  let anonymous: Client;

  before(async () => {
    registry = await startListeningRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WATCH_MAX_PER_AGENT: '1',
    });
    watcher = await register(registry);
    target = await register(registry);
    client = await connect(`${registry.url}/mcp`, watcher.token);
    anonymous = await connect(`${registry.url}/mcp`);
  });
  after(async () => {
    await client?.close();
    await anonymous?.close();
    await registry?.close();
  });

  test('watch, list_watches and remove_watch act on the REST watches of the calling agent', async () => {
    const created = (await client.callTool({
      name: 'watch',
      arguments: { target: target.did, url: 'http://127.0.0.1:9/hook', events: ['agent.updated'] },
    })) as CallToolResult;
    assert.equal(created.isError, undefined, textOf(created));
    const watch = created.structuredContent as { id: string; secret: string; target: string };
    assert.match(watch.id, /^wat_/);
    assert.match(watch.secret, /^whsec_/);
    assert.equal(watch.target, target.did);

    // REST sees the watch the tool made, without its secret.
    const listed = await http(registry, 'GET', '/api/watches', watcher.token);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      (listed.body.watches as { id: string }[]).map((item) => item.id),
      [watch.id],
    );
    const page = (await client.callTool({ name: 'list_watches', arguments: {} })) as CallToolResult;
    const watches = (page.structuredContent as { watches: Record<string, unknown>[] }).watches;
    assert.deepEqual(
      watches.map((item) => item.id),
      [watch.id],
    );
    assert.equal(watches[0]?.secret, undefined);

    // The REST limit holds here too: one watch per agent in this registry.
    const second = (await client.callTool({
      name: 'watch',
      arguments: { target: target.did, url: 'http://127.0.0.1:9/other', events: ['agent.deactivated'] },
    })) as CallToolResult;
    assert.equal(second.isError, true);
    assert.match(textOf(second), /^WATCH_LIMIT_REACHED: /);

    const removed = (await client.callTool({
      name: 'remove_watch',
      arguments: { watch_id: watch.id },
    })) as CallToolResult;
    assert.equal(removed.isError, undefined, textOf(removed));
    const gone = await http(registry, 'GET', '/api/watches', watcher.token);
    assert.deepEqual(gone.body.watches, []);
    const again = (await client.callTool({
      name: 'remove_watch',
      arguments: { watch_id: watch.id },
    })) as CallToolResult;
    assert.equal(again.isError, true);
    assert.match(textOf(again), /^WATCH_NOT_FOUND: /);
  });

  test('bad events for the target are refused as on REST, and no token asks for one', async () => {
    const wrong = (await client.callTool({
      name: 'watch',
      arguments: { target: target.did, url: 'http://127.0.0.1:9/hook', events: ['entry.tools_changed'] },
    })) as CallToolResult;
    assert.equal(wrong.isError, true);
    assert.match(textOf(wrong), /^INVALID_WATCH_EVENTS: /);

    const tokenless = (await anonymous.callTool({
      name: 'watch',
      arguments: { target: target.did, url: 'http://127.0.0.1:9/hook', events: ['agent.updated'] },
    })) as CallToolResult;
    assert.equal(tokenless.isError, true);
    assert.match(textOf(tokenless), /^TOKEN_MISSING: watch acts as a registered agent/);
  });
});
