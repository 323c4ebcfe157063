import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { capabilitiesDigest } from '@agent-registry/protocol';
import { getJson, registerNamed, startSecondNode, submitReview } from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

interface Summary {
  did: string;
  name: string;
  description: string | null;
  capabilities: { type: string; description?: string; tags?: string[] }[];
  tags: string[];
  reputation_score: number;
  average_rating: number;
  total_reviews: number;
  created_at: number;
  status: string;
  home_registry?: string;
  provenance?: { kind: string; home_registry: string };
}

interface SearchBody {
  agents: Summary[];
  total: number;
  limit: number;
  offset: number;
  next_cursor: string | null;
}

describe('GET /api/agents/search', () => {
  let registry: TestRegistry;
  const agents: Record<string, Registered> = {};
  /** Every active agent of this registry, in registration order. */
  const active: Registered[] = [];

  const search = async (query: string): Promise<SearchBody> => {
    const response = await getJson(registry, `/api/agents/search${query === '' ? '' : `?${query}`}`);
    assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    return response.json<SearchBody>();
  };
  const names = (body: SearchBody): string[] => body.agents.map((agent) => agent.name);

  before(async () => {
    registry = await startRegistry();
    const add = async (key: string, name: string, profile: Parameters<typeof registerNamed>[2]) => {
      registry.clock.advance(1000);
      agents[key] = await registerNamed(registry, name, profile);
      active.push(agents[key]!);
    };
    await add('translator', 'Polyglot Translator', {
      description: 'Renders English documents into French and German',
      capabilities: [{ type: 'translation', description: 'English to French and German' }],
      tags: ['language', 'french'],
    });
    await add('coder', 'Code Smith', {
      description: 'Builds small programs on request',
      capabilities: [{ type: 'coding', description: 'Writes Python and TypeScript', tags: ['python'] }],
      tags: ['python', 'developer'],
    });
    await add('analyst', 'Data Cruncher', {
      description: 'Statistics on spreadsheets',
      capabilities: [{ type: 'data_analysis', description: 'Statistics on CSV files' }, { type: 'Coding' }],
      tags: ['Python', 'finance'],
    });
    await add('writer', 'Essay Writer', {
      description: 'Long-form essays, with a translation of tone for each audience',
      capabilities: [{ type: 'writing', description: 'Essays and articles' }],
      tags: ['writing'],
    });
    await add('cafe', 'Café Crème', {
      description: 'Knows everything about coffee',
      capabilities: [{ type: 'research', description: 'coffee research' }],
      tags: [],
    });
    await add('dormant', 'Dormant Translator', {
      capabilities: [{ type: 'translation' }],
      tags: ['language'],
    });
    const dormant = agents.dormant!;
    await registry.app.inject({
      method: 'DELETE',
      url: agentPath(dormant.did),
      headers: bearer(dormant.token),
    });
    active.pop();
    // Reputation v2: coder 52.94 (one 10), translator 51.63 (one 8), analyst 47.06 (one 1), each from a
    // reviewer 30 days old who called nobody else (trust 0.1875; v1, without reviewer evidence: 62.5, 56.94, 37.5).
    for (const [key, rating] of [
      ['coder', 10],
      ['translator', 8],
      ['analyst', 1],
    ] as const) {
      registry.clock.advance(1000);
      const reviewer = await registerNamed(registry, `Reviewer ${active.length}`, { tags: ['reviewer'] });
      active.push(reviewer);
      registry.clock.advance(30 * 24 * 60 * 60 * 1000);
      const token = (await registry.ctx.tokens.issue(reviewer.did)).token;
      const response = await submitReview(registry, token, { target_did: agents[key]!.did, rating });
      assert.equal(response.statusCode, 201, response.body);
    }
  });
  after(() => registry.close());

  test('each element has exactly the documented members; defaults limit 50, offset 0', async () => {
    const body = await search('capability=coding');
    assert.equal(body.limit, 50);
    assert.equal(body.offset, 0);
    const coder = body.agents.find((agent) => agent.did === agents.coder!.did);
    assert.deepEqual(coder, {
      did: agents.coder!.did,
      name: 'Code Smith',
      description: 'Builds small programs on request',
      capabilities: [{ type: 'coding', description: 'Writes Python and TypeScript', tags: ['python'] }],
      tags: ['python', 'developer'],
      reputation_score: 52.94,
      average_rating: 10,
      total_reviews: 1,
      created_at: coder!.created_at,
      status: 'active',
      // Extensions: every result says where it lives; the agents of this registry are registered here.
      home_registry: registry.config.identity.publicUrl,
      provenance: { kind: 'registered', home_registry: registry.config.identity.publicUrl },
      availability: { status: 'unknown', last_seen_at: null },
      capabilities_digest: capabilitiesDigest(coder!.capabilities),
    });
    const profile = (await getJson(registry, agentPath(agents.coder!.did))).json();
    assert.equal(coder!.created_at, profile.created_at);
  });

  test('without filters: every active agent, by reputation (ties newest first), exact total', async () => {
    const body = await search('');
    assert.equal(body.total, active.length);
    assert.equal(body.agents.length, active.length);
    assert.deepEqual(names(body).slice(0, 3), ['Code Smith', 'Polyglot Translator', 'Data Cruncher']);
    const rest = body.agents.slice(3);
    assert.ok(rest.every((agent) => agent.reputation_score === 0));
    const created = rest.map((agent) => agent.created_at);
    assert.deepEqual(
      created,
      [...created].sort((a, b) => b - a),
    );
    assert.ok(!names(body).includes('Dormant Translator'), 'deactivated agents are left out');
  });

  test('capability filters by type, case-insensitively; deactivated agents never match', async () => {
    assert.deepEqual(names(await search('capability=coding')), ['Code Smith', 'Data Cruncher']);
    assert.deepEqual(names(await search('capability=CODING')), ['Code Smith', 'Data Cruncher']);
    assert.deepEqual(names(await search('capability=translation')), ['Polyglot Translator']);
    assert.deepEqual(names(await search('capability=data_analysis')), ['Data Cruncher']);
    const none = await search('capability=teleportation');
    assert.deepEqual(none, { agents: [], total: 0, limit: 50, offset: 0, next_cursor: null });
  });

  test('deactivation takes the agent out of the search index', async () => {
    assert.equal((await search('q=dormant')).total, 0);
    for (const query of ['q=translator', 'capability=translation', 'tags=language', 'sort=created_at']) {
      assert.ok(!names(await search(query)).includes('Dormant Translator'), query);
    }
  });

  test('an agent deactivated behind the registry (no change-feed stamp) never shows; a node started later does not hold it', async () => {
    const stale = await registerNamed(registry, 'Stale Wanderer', {
      capabilities: [{ type: 'wandering' }],
      tags: ['nomad'],
    });
    const { db } = registry.ctx.database;
    await db.updateTable('agents').set({ status: 'deactivated' }).where('did', '=', stale.did).execute();
    assert.deepEqual((await search('q=wanderer')).agents, []);
    assert.deepEqual((await search('capability=wandering')).agents, []);
    const node = await startSecondNode(registry);
    try {
      for (const query of ['q=wanderer', 'capability=wandering', 'tags=nomad']) {
        const response = await node.app.inject({ url: `/api/agents/search?${query}` });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json<SearchBody>().total, 0, query);
      }
    } finally {
      await node.close();
    }
  });

  test('tags match if the agent has any of them, case-insensitively', async () => {
    assert.deepEqual(names(await search('tags=python')), ['Code Smith', 'Data Cruncher']);
    assert.deepEqual(names(await search('tags=finance,writing')), ['Data Cruncher', 'Essay Writer']);
    assert.deepEqual(names(await search(`tags=${encodeURIComponent(' FRENCH , nothing,,')}`)), [
      'Polyglot Translator',
    ]);
    assert.equal((await search('tags=language')).total, 1, 'the deactivated agent also had it');
    assert.equal((await search('tags=reviewer')).total, 3);
  });

  test('filters combine; min_reputation is inclusive', async () => {
    assert.deepEqual(names(await search('capability=coding&tags=finance')), ['Data Cruncher']);
    assert.deepEqual(names(await search('min_reputation=50')), ['Code Smith', 'Polyglot Translator']);
    assert.deepEqual(names(await search('min_reputation=52.94')), ['Code Smith']);
    assert.equal((await search('min_reputation=52.95')).total, 0);
    assert.equal((await search('min_reputation=0')).total, active.length);
    assert.equal((await search('min_reputation=100')).total, 0);
    assert.deepEqual(names(await search('tags=python&min_reputation=50')), ['Code Smith']);
  });

  test('sort by created_at or reputation, either order', async () => {
    const registered = active.map((agent) => agent.did);
    const ascending = await search('sort=created_at&order=asc');
    assert.deepEqual(
      ascending.agents.map((agent) => agent.did),
      registered,
    );
    const descending = await search('sort=created_at');
    assert.deepEqual(
      descending.agents.map((agent) => agent.did),
      [...registered].reverse(),
    );
    const byReputation = await search('sort=reputation&order=asc&min_reputation=1');
    assert.deepEqual(names(byReputation), ['Data Cruncher', 'Polyglot Translator', 'Code Smith']);
    const worstFirst = (await search('order=asc')).agents.map((agent) => agent.reputation_score);
    assert.deepEqual(
      worstFirst,
      [...worstFirst].sort((a, b) => a - b),
    );
  });

  test('pagination walks every agent exactly once with a constant total', async () => {
    const all = (await search('sort=created_at&limit=100')).agents.map((agent) => agent.did);
    for (const sort of ['reputation', 'created_at']) {
      const seen: string[] = [];
      for (let offset = 0; offset < all.length + 2; offset += 2) {
        const page = await search(`sort=${sort}&limit=2&offset=${offset}`);
        assert.equal(page.total, all.length);
        assert.equal(page.limit, 2);
        assert.equal(page.offset, offset);
        seen.push(...page.agents.map((agent) => agent.did));
      }
      assert.deepEqual([...seen].sort(), [...all].sort(), sort);
    }
    const far = await search('offset=9999&limit=100');
    assert.deepEqual(far.agents, []);
    assert.equal(far.total, all.length);
  });

  describe('q: full text over name, description, capabilities and tags', () => {
    test('matches every word, stems, folds diacritics, and completes the last word as a prefix', async () => {
      assert.deepEqual(names(await search('q=french%20translator')), ['Polyglot Translator']);
      assert.deepEqual(names(await search('q=translations')).sort(), ['Essay Writer', 'Polyglot Translator']);
      assert.deepEqual(names(await search('q=polyg')), ['Polyglot Translator']);
      assert.deepEqual(names(await search('q=cafe')), ['Café Crème']);
      assert.deepEqual(names(await search(`q=${encodeURIComponent('CRÈME')}`)), ['Café Crème']);
      assert.deepEqual(names(await search('q=csv')), ['Data Cruncher'], 'capability descriptions count');
      assert.deepEqual(names(await search('q=developer')), ['Code Smith'], 'tags count');
      assert.deepEqual(names(await search('q=data_analysis')), ['Data Cruncher'], 'capability types count');
      assert.equal((await search('q=dormant')).total, 0, 'deactivated agents are left out');
      assert.equal((await search('q=zebra')).total, 0);
    });

    test('ranked by relevance: a name hit before a tag hit before a description hit', async () => {
      const ranked = await startRegistry();
      try {
        const filler = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
        for (const word of filler)
          await registerNamed(ranked, `Agent ${word}`, { description: `About ${word}` });
        const inDescription = await registerNamed(ranked, 'Helper one', {
          description: 'Helps every quokka',
        });
        ranked.clock.advance(1000);
        const inName = await registerNamed(ranked, 'Quokka helper', { description: 'Helps every animal' });
        ranked.clock.advance(1000);
        const inTags = await registerNamed(ranked, 'Helper two', {
          description: 'Helps every animal',
          tags: ['quokka'],
        });
        const response = await getJson(ranked, '/api/agents/search?q=quokka');
        const body = response.json<SearchBody>();
        assert.deepEqual(
          body.agents.map((agent) => agent.did),
          [inName.did, inTags.did, inDescription.did],
        );
        const reversed = (await getJson(ranked, '/api/agents/search?q=quokka&order=asc')).json<SearchBody>();
        assert.deepEqual(
          reversed.agents.map((agent) => agent.did),
          [inDescription.did, inTags.did, inName.did],
        );
        // An explicit sort replaces relevance.
        const byDate = (
          await getJson(ranked, '/api/agents/search?q=quokka&sort=created_at&order=asc')
        ).json<SearchBody>();
        assert.deepEqual(
          byDate.agents.map((agent) => agent.did),
          [inDescription.did, inName.did, inTags.did],
        );
      } finally {
        await ranked.close();
      }
    });

    test('a tie wider than one page pages exactly in the reputation order (reputation, newest, DID), each agent once', async () => {
      const tied = await startRegistry();
      try {
        // Identical documents score the same; 45 of them outnumber the first read for a page of 5.
        const twins: Registered[] = [];
        for (let index = 0; index < 45; index += 1) {
          twins.push(await registerNamed(tied, 'Zebra twin', { description: 'Same words' }));
        }
        const reviewer = await registerNamed(tied, 'Unrelated reviewer');
        const favourite = twins[30]!;
        const review = await submitReview(tied, reviewer.token, { target_did: favourite.did, rating: 9 });
        assert.equal(review.statusCode, 201, review.body);
        const everyTwin = (
          await getJson(tied, '/api/agents/search?sort=created_at&order=desc&limit=100&q=zebra')
        ).json<SearchBody>().agents;
        const expected = [
          favourite.did,
          ...everyTwin
            .filter((twin) => twin.did !== favourite.did)
            .sort((a, b) => b.created_at - a.created_at || (a.did < b.did ? 1 : -1))
            .map((twin) => twin.did),
        ];
        assert.deepEqual(await pagedDids(tied, 'q=zebra', 5, 50, 45), expected);
        // With a filter the matches are walked in rank order instead; same answer.
        assert.deepEqual(await pagedDids(tied, 'q=zebra&capability=general', 5, 45, 45), expected);
      } finally {
        await tied.close();
      }
    });

    test('with a filter, relevance pages follow the rank: name hits before description hits', async () => {
      const ranked = await startRegistry();
      try {
        // Every third agent has the word in its name and ranks above the others, which have it in
        // the description only; saying a word twice counts once (keyword stuffing buys nothing).
        const strong: Registered[] = [];
        const weak: Registered[] = [];
        for (let index = 0; index < 300; index += 1) {
          const inName = index % 3 === 0;
          const agent = inName
            ? await registerNamed(ranked, 'Okapi')
            : await registerNamed(ranked, 'Plain', { description: 'okapi okapi okapi' });
          (inName ? strong : weak).push(agent);
        }
        // Within a level, the reputation order: all at 0 here, so newest first (as sort=created_at).
        const newestFirst = await pagedDids(ranked, 'q=okapi&sort=created_at', 100, 300, 300);
        const strongDids = new Set(strong.map((agent) => agent.did));
        const expected = [
          ...newestFirst.filter((did) => strongDids.has(did)),
          ...newestFirst.filter((did) => !strongDids.has(did)),
        ].slice(0, 6);
        assert.equal(weak.length, 200);
        assert.deepEqual(await pagedDids(ranked, 'q=okapi&min_reputation=0', 1, 6, 300), expected);
      } finally {
        await ranked.close();
      }
    });

    test('q combines with filters and pagination; the total counts every match', async () => {
      assert.deepEqual(names(await search('q=python&capability=data_analysis')), ['Data Cruncher']);
      const all = await search('q=reviewer');
      assert.equal(all.total, 3);
      const page = await search('q=reviewer&limit=1&offset=1');
      assert.equal(page.total, 3);
      assert.equal(page.agents.length, 1);
      assert.equal(page.agents[0]!.did, all.agents[1]!.did);
    });

    test('query syntax is never passed through: operators and quotes are plain words', async () => {
      for (const q of [
        '"unbalanced',
        'code OR smith',
        'NEAR(code smith)',
        'name:code',
        'code*',
        '-code',
        "code' --",
      ]) {
        const response = await getJson(registry, `/api/agents/search?q=${encodeURIComponent(q)}`);
        assert.equal(response.statusCode, 200, `${q}: ${response.body}`);
      }
      assert.deepEqual(names(await search(`q=${encodeURIComponent('name:code')}`)), []);
      assert.deepEqual(names(await search(`q=${encodeURIComponent('"code smith"')}`)), ['Code Smith']);
    });
  });

  test('the index follows profile updates', async () => {
    const agent = await registerNamed(registry, 'Shapeshifter', {
      capabilities: [{ type: 'juggling' }],
      tags: ['circus'],
    });
    active.push(agent);
    assert.equal((await search('capability=juggling')).total, 1);
    const update = await registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did),
      headers: bearer(agent.token),
      payload: {
        name: 'Metamorph',
        description: 'Changes shape',
        capabilities: [{ type: 'Acrobatics', description: 'Somersaults' }],
        tags: ['Stage'],
      },
    });
    assert.equal(update.statusCode, 200, update.body);
    assert.equal((await search('capability=juggling')).total, 0);
    assert.equal((await search('tags=circus')).total, 0);
    assert.equal((await search('q=shapeshifter')).total, 0);
    assert.deepEqual(names(await search('capability=acrobatics')), ['Metamorph']);
    assert.deepEqual(names(await search('tags=stage')), ['Metamorph']);
    assert.deepEqual(names(await search('q=somersault')), ['Metamorph']);
    // Clearing the tags removes them from the index too.
    await registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did),
      headers: bearer(agent.token),
      payload: { tags: [] },
    });
    assert.equal((await search('tags=stage')).total, 0);
    assert.deepEqual(names(await search('capability=acrobatics')), ['Metamorph']);
  });

  test('400 JSON {error, details, code} for out-of-range or unknown values', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'VALIDATION_FAILED'],
      ['limit=101', 'VALIDATION_FAILED'],
      ['limit=ten', 'VALIDATION_FAILED'],
      ['limit=1.5', 'VALIDATION_FAILED'],
      ['offset=-1', 'VALIDATION_FAILED'],
      ['offset=10000', 'VALIDATION_FAILED'],
      ['min_reputation=-0.1', 'VALIDATION_FAILED'],
      ['min_reputation=100.1', 'VALIDATION_FAILED'],
      ['min_reputation=high', 'VALIDATION_FAILED'],
      ['sort=rating', 'VALIDATION_FAILED'],
      ['sort=relevance', 'VALIDATION_FAILED'],
      ['order=up', 'VALIDATION_FAILED'],
      ['capability=', 'VALIDATION_FAILED'],
      ['capability=%20%20', 'VALIDATION_FAILED'],
      [`capability=${'c'.repeat(101)}`, 'VALIDATION_FAILED'],
      ['tags=,,', 'INVALID_TAGS'],
      ['tags=', 'VALIDATION_FAILED'],
      [`tags=${Array.from({ length: 21 }, (_, index) => `t${index}`).join(',')}`, 'INVALID_TAGS'],
      [`tags=${'t'.repeat(51)}`, 'INVALID_TAGS'],
      ['q=', 'VALIDATION_FAILED'],
      ['q=%21%21%21', 'INVALID_SEARCH_QUERY'],
      [`q=${'a'.repeat(201)}`, 'VALIDATION_FAILED'],
      [`q=${Array.from({ length: 17 }, (_, index) => `w${index}`).join('+')}`, 'INVALID_SEARCH_QUERY'],
    ];
    for (const [query, code] of cases) {
      const response = await getJson(registry, `/api/agents/search?${query}`);
      assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
      const body = response.json();
      assert.equal(body.code, code, query);
      assert.equal(typeof body.error, 'string');
      assert.equal(typeof body.details, 'string');
    }
    for (const query of [
      'limit=1',
      'limit=100',
      'offset=9999',
      'min_reputation=0',
      'min_reputation=100',
      'order=asc',
    ]) {
      const response = await getJson(registry, `/api/agents/search?${query}`);
      assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    }
  });
});

/** The DIDs of the pages of `limit` from offset 0 up to `end`, each page asserting the same `total`. */
async function pagedDids(
  registry: TestRegistry,
  query: string,
  limit: number,
  end: number,
  total: number,
): Promise<string[]> {
  const dids: string[] = [];
  for (let offset = 0; offset < end; offset += limit) {
    const page = (
      await getJson(registry, `/api/agents/search?${query}&limit=${limit}&offset=${offset}`)
    ).json<SearchBody>();
    assert.equal(page.total, total, `${query} at offset ${offset}`);
    dids.push(...page.agents.map((agent) => agent.did));
  }
  return dids;
}
