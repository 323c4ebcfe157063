import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { register } from '@agent-registry/testkit/in-process';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';

const textOf = (result: CallToolResult): string =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

/** The alert text of the search page, as the visitor reads it. */
function alertOf(page: string): string | undefined {
  const text = /<p class="error" role="alert">([^<]*)<\/p>/.exec(page)?.[1];
  return text
    ?.replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

describe('the search page and the MCP search tool validate their arguments with one function', () => {
  let registry: ListeningRegistry;
  let mcp: Client;

  before(async () => {
    registry = await startListeningRegistry();
    mcp = new Client({ name: 'registry-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${registry.url}/mcp`)));
  });
  after(async () => {
    await mcp?.close();
    await registry?.close();
  });

  const page = (query: string) =>
    registry.app.inject({ method: 'GET', url: `/?${query}`, headers: { accept: 'text/html' } });

  const cases: [query: string, args: Record<string, unknown>, message: string][] = [
    ['min_reputation=500', { min_reputation: 500 }, 'min_reputation must be <= 100'],
    ['min_reputation=abc', { min_reputation: 'abc' }, 'min_reputation must be number'],
    [
      'sort=bogus',
      { sort: 'bogus' },
      'sort must be one of: reputation, created_at, success_rate, latency, availability',
    ],
    ['order=up', { order: 'up' }, 'order must be one of: asc, desc'],
    ['available=yes', { available: 'yes' }, 'available must be one of: true, false'],
    [`q=${'a'.repeat(201)}`, { q: 'a'.repeat(201) }, 'q must NOT have more than 200 characters'],
  ];

  for (const [query, args, message] of cases) {
    test(`?${query.slice(0, 40)} is refused on the page in the words of the tool`, async () => {
      const tool = (await mcp.callTool({ name: 'search_agents', arguments: args })) as CallToolResult;
      assert.equal(tool.isError, true);
      assert.equal(textOf(tool), `VALIDATION_FAILED: ${message}`);
      const answer = await page(query);
      assert.equal(answer.statusCode, 400);
      assert.equal(alertOf(answer.body), message);
    });
  }

  test('a valid form searches as the tool does', async () => {
    const tool = (await mcp.callTool({
      name: 'search_agents',
      arguments: { sort: 'created_at', order: 'asc', tags: ['nothing-has-this-tag'] },
    })) as CallToolResult;
    assert.equal(tool.isError, undefined);
    assert.equal((tool.structuredContent as { total: number }).total, 0);
    const answer = await page('sort=created_at&order=asc&tags=nothing-has-this-tag,');
    assert.equal(answer.statusCode, 200);
    assert.match(answer.body, /0 agents match/);
  });

  test('available takes a JSON boolean, as models send it, as well as its string form', async () => {
    const agent = await register(registry, undefined, {
      name: 'Never online',
      capabilities: [{ type: 'x' }],
    });
    for (const [available, expected] of [
      [true, []],
      ['true', []],
      [false, [agent.did]],
      ['false', [agent.did]],
    ] as const) {
      const tool = (await mcp.callTool({
        name: 'search_agents',
        arguments: { capability: 'x', available },
      })) as CallToolResult;
      assert.equal(tool.isError, undefined, textOf(tool));
      const found = (tool.structuredContent as { agents: { did: string }[] }).agents;
      assert.deepEqual(
        found.map((hit) => hit.did),
        expected,
        `available: ${JSON.stringify(available)}`,
      );
    }
    const numeric = (await mcp.callTool({
      name: 'search_agents',
      arguments: { available: 1 },
    })) as CallToolResult;
    assert.equal(textOf(numeric), 'VALIDATION_FAILED: available must be one of: true, false');
  });
});
