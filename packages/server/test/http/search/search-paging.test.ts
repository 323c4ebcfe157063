import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getJson, registerNamed, startSecondNode } from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

interface SearchBody {
  agents: { did: string; name: string }[];
  total: number;
  offset: number;
  next_cursor: string | null;
}

const WORDS = ['otter', 'heron', 'badger'];

describe('search paging by cursor, and one index per node', () => {
  let registry: TestRegistry;
  const agents: Registered[] = [];

  const search = async (query: string, target: TestRegistry | { app: TestRegistry['app'] } = registry) => {
    const response = await target.app.inject({ method: 'GET', url: `/api/agents/search?${query}` });
    assert.equal(response.statusCode, 200, response.body);
    return response.json<SearchBody>();
  };

  /** Every DID of a search, page by page through next_cursor; `between` runs after each page. */
  const followCursor = async (query: string, between: () => Promise<void> = async () => {}) => {
    const dids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages += 1) {
      const page: SearchBody = await search(cursor === null ? query : `${query}&cursor=${cursor}`);
      if (cursor !== null) assert.equal(page.offset, 0, 'a page asked by cursor reports offset 0');
      dids.push(...page.agents.map((agent) => agent.did));
      cursor = page.next_cursor;
      if (cursor === null) return dids;
      await between();
    }
    throw new Error('cursor paging did not end');
  };

  /** Every DID of a search, by offset pages of 100. */
  const allByOffset = async (query: string) => {
    const dids: string[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await search(`${query}&limit=100&offset=${offset}`);
      dids.push(...page.agents.map((agent) => agent.did));
      if (offset + 100 >= page.total) return dids;
    }
  };

  before(async () => {
    registry = await startRegistry();
    for (let index = 0; index < 90; index += 1) {
      const word = WORDS[index % WORDS.length] as string;
      agents.push(
        await registerNamed(registry, `${word} ${index}`, {
          description: index % 2 === 0 ? 'paging fixture' : `paging fixture ${word}`,
          tags: ['paging'],
        }),
      );
    }
  });

  after(async () => {
    await registry.close();
  });

  test('cursor pages list every match once, in the same order as offset pages', async () => {
    for (const query of [
      'tags=paging&limit=7',
      'tags=paging&limit=7&sort=created_at&order=asc',
      'q=paging&limit=9',
      'q=paging&limit=9&order=asc',
      'q=otter&limit=4&sort=reputation',
    ]) {
      const everything = await allByOffset(query.replace(/&limit=\d+/, ''));
      assert.deepEqual(await followCursor(query), everything, query);
    }
  });

  test('agents registered while a client pages neither repeat nor push others out', async () => {
    const before = (await search('q=paging&limit=100')).agents.map((agent) => agent.did);
    let added = 0;
    const seen = await followCursor('q=paging&limit=10', async () => {
      // Newcomers rank first (their name holds the word) and would shift every offset page.
      for (let count = 0; count < 3; count += 1) {
        added += 1;
        await registerNamed(registry, `Paging newcomer ${added}`, { tags: ['paging'] });
      }
    });
    assert.equal(new Set(seen).size, seen.length, 'no agent twice');
    for (const did of before) assert.ok(seen.includes(did), `${did} was skipped`);
  });

  test('a bad cursor is a 400 that says what to do', async () => {
    const first = await search('tags=paging&limit=5');
    assert.ok(first.next_cursor !== null);
    // The same position as a registry before the reputation tie-breaks wrote it: no rating, no reviews.
    const issued = JSON.parse(Buffer.from(first.next_cursor, 'base64url').toString('utf8')) as {
      k: [number, number, number, number, number, string];
    };
    const [score, reputation, , , createdAt, did] = issued.k;
    const earlier = Buffer.from(
      JSON.stringify({ ...issued, k: [score, reputation, createdAt, did] }),
    ).toString('base64url');
    const cases: [string, RegExp][] = [
      [`tags=paging&cursor=${earlier}`, /issued before .* repeat the search without cursor/],
      ['tags=paging&cursor=not-a-cursor', /pass next_cursor from a search response unchanged/],
      [`tags=paging&sort=created_at&cursor=${first.next_cursor}`, /different search/],
      [`tags=paging&offset=5&cursor=${first.next_cursor}`, /either cursor or offset/],
      [`tags=paging&cursor=${Buffer.from('{"v":1,"s":"x","k":[1,2]}').toString('base64url')}`, /unchanged/],
    ];
    for (const [query, message] of cases) {
      const response = await getJson(registry, `/api/agents/search?${query}`);
      assert.equal(response.statusCode, 400, query);
      const body = response.json<{ code: string; details: string }>();
      assert.equal(body.code, 'INVALID_CURSOR', query);
      assert.match(body.details, message, query);
    }
  });

  test('service-record sorts page by cursor too (by position)', async () => {
    const everything = await allByOffset('tags=paging&sort=success_rate');
    assert.ok(everything.length > 100);
    assert.deepEqual(await followCursor('tags=paging&sort=success_rate&limit=13'), everything);
  });

  test('a write on one node is in the next search on another', async () => {
    const node = await startSecondNode(registry);
    try {
      const agent = await registerNamed(registry, 'Crossnode Kingfisher', { tags: ['crossnode'] });
      assert.deepEqual(
        (await search('q=kingfisher', node)).agents.map((hit) => hit.did),
        [agent.did],
      );
      const update = await registry.app.inject({
        method: 'PUT',
        url: agentPath(agent.did),
        headers: bearer(agent.token),
        payload: { name: 'Crossnode Cormorant', description: 'Dives for fish' },
      });
      assert.equal(update.statusCode, 200, update.body);
      assert.equal((await search('q=kingfisher', node)).total, 0);
      assert.equal((await search('q=cormorant', node)).total, 1);
      const removed = await registry.app.inject({
        method: 'DELETE',
        url: agentPath(agent.did),
        headers: bearer(agent.token),
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal((await search('tags=crossnode', node)).total, 0);
      assert.equal((await search('q=cormorant', node)).total, 0);
    } finally {
      await node.close();
    }
  });
});
