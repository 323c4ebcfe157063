import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { getJson, registerNamed, startSecondNode, submitReview } from '../../support/discovery-helpers.js';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

const searchesInDatabase = async (registry: TestRegistry): Promise<number> => {
  const row = await registry.ctx.database.db
    .selectFrom('registry_counters')
    .select('value')
    .where('name', '=', 'searches')
    .executeTakeFirst();
  return row === undefined ? 0 : Number(row.value);
};

describe('GET /api/stats', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ REVIEW_RATE_LIMIT: '7', REVIEW_RATE_WINDOW_SECONDS: '900' });
  });
  after(() => registry.close());

  test('200 with counts, governance and updated_at; cached 60 seconds', async () => {
    const [a, b, gone] = [
      await registerNamed(registry, 'Stat A'),
      await registerNamed(registry, 'Stat B'),
      await registerNamed(registry, 'Stat gone'),
    ];
    await registry.app.inject({ method: 'DELETE', url: agentPath(gone.did), headers: bearer(gone.token) });
    await submitReview(registry, a.token, { target_did: b.did, rating: 9 });
    await submitReview(registry, b.token, { target_did: a.did, rating: 8 });
    for (let index = 0; index < 3; index += 1) await getJson(registry, '/api/agents/search?q=stat');
    const refused = await getJson(registry, '/api/agents/search?limit=0');
    assert.equal(refused.statusCode, 400);

    const response = await getJson(registry, '/api/stats');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'public, max-age=60');
    const stats = response.json();
    assert.deepEqual(
      { ...stats, governance: undefined },
      {
        agents_count: 2,
        reviews_count: 2,
        searches_count: 3,
        governance: undefined,
        updated_at: registry.clock.now(),
      },
    );
    assert.deepEqual(stats.governance.reviews.rate_limit, { max_reviews: 7, window_seconds: 900 });
    assert.equal(stats.governance.reviews.edit_window_seconds, 600);
    assert.equal(stats.governance.reviews.edit_max_rating_change, 4);
    assert.equal(stats.governance.reviews.reviews_per_agent, 1);
    assert.equal(stats.governance.reviews.rating_min, 1);
    assert.equal(stats.governance.reviews.rating_max, 10);
    assert.equal(stats.governance.reviews.comment_max_length, 1000);
    assert.deepEqual(stats.governance.identity.key_types, ['ed25519', 'secp256k1']);
    assert.deepEqual(stats.governance.identity.chains, [
      'eip155:1',
      'eip155:137',
      'eip155:42161',
      'eip155:8453',
    ]);
    assert.deepEqual(stats.governance.identity.did_methods, ['did:web', 'did:pkh']);
    assert.equal(stats.governance.reputation.decay_days, 180);
    assert.equal(stats.governance.reputation.version, 2);
    assert.deepEqual(stats.governance.reputation.reviewer_weight, {
      maturity_days: 30,
      breadth_partners: 3,
      breadth_floor: 0.25,
      unrated_standing: 0.75,
      reciprocal_factor: 0.25,
      unproven_cap: 1,
      linked_reviewers: 'weight 0; their call records do not verify',
      identity_links: ['same webhook host', 'registration referrer naming a registered agent'],
    });
    assert.deepEqual(stats.governance.service_record.windows_days, [7, 30]);
    assert.deepEqual(stats.governance.search.sorts, [
      'reputation',
      'created_at',
      'success_rate',
      'latency',
      'availability',
    ]);
    assert.equal(stats.governance.search.offset_max, 9999);
    assert.equal(stats.governance.stats_cache_seconds, 60);

    // Within 60 s the same numbers come back, however much changes.
    await registerNamed(registry, 'Stat C');
    await getJson(registry, '/api/agents/search');
    registry.clock.advance(59_999);
    const cached = await getJson(registry, '/api/stats');
    assert.deepEqual(cached.json(), stats);
    assert.equal(cached.headers['cache-control'], 'public, max-age=1');

    registry.clock.advance(1);
    const fresh = (await getJson(registry, '/api/stats')).json();
    assert.equal(fresh.agents_count, 3);
    assert.equal(fresh.searches_count, 4);
    assert.equal(fresh.updated_at, registry.clock.now());
  });

  test('concurrent requests after expiry share one recomputation', async () => {
    registry.clock.advance(60_000);
    const responses = await Promise.all(Array.from({ length: 10 }, () => getJson(registry, '/api/stats')));
    const bodies = responses.map((response) => response.body);
    assert.ok(bodies.every((body) => body === bodies[0]));
  });

  test('searches are counted in memory, written in one batch, and never per request', async () => {
    const before = await searchesInDatabase(registry);
    for (let index = 0; index < 5; index += 1) {
      assert.equal((await getJson(registry, '/api/agents/search')).statusCode, 200);
    }
    assert.equal(await searchesInDatabase(registry), before, 'no write per search');
    await registry.ctx.stats.flushSearches();
    assert.equal(await searchesInDatabase(registry), before + 5);
    await registry.ctx.stats.flushSearches();
    assert.equal(await searchesInDatabase(registry), before + 5, 'a flush adds each search once');
  });

  test('every node adds its own searches; closing a node flushes what it counted', async () => {
    const second = await startSecondNode(registry);
    for (let index = 0; index < 4; index += 1) {
      const response = await second.app.inject({ method: 'GET', url: '/api/agents/search?q=stat' });
      assert.equal(response.statusCode, 200);
    }
    await getJson(registry, '/api/agents/search');
    await second.close();
    registry.clock.advance(60_000);
    const before = await searchesInDatabase(registry);
    const stats = (await getJson(registry, '/api/stats')).json();
    assert.equal(stats.searches_count, before + 1);
    assert.ok(before >= 4);
  });
});

describe('500 on database errors', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  test('stats and search answer 500 JSON without internals when the database fails', async () => {
    await sql`drop table registry_counters`.execute(registry.ctx.database.db);
    // Search reads the change-feed head before every search (to bring its index up to date).
    await sql`drop table change_feed_head`.execute(registry.ctx.database.db);
    const stats = await getJson(registry, '/api/stats');
    assert.equal(stats.statusCode, 500, stats.body);
    assert.equal(stats.json().code, 'INTERNAL_ERROR');
    assert.doesNotMatch(stats.body, /registry_counters|SQLITE/);
    const search = await getJson(registry, '/api/agents/search?tags=x');
    assert.equal(search.statusCode, 500, search.body);
    assert.equal(search.json().code, 'INTERNAL_ERROR');
    assert.doesNotMatch(search.body, /change_feed_head|SQLITE/);
  });
});

describe('OpenAPI', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  test('the served document describes every discovery and review operation', async () => {
    const document = (await getJson(registry, '/openapi.json')).json();
    const expected: [string, string, string[]][] = [
      // The route's own statuses, plus those every route of its kind answers (500, 503; 413 and 415 with a body).
      ['/api/agents/search', 'get', ['200', '400', '500', '503']],
      ['/api/stats', 'get', ['200', '400', '500', '503']],
      ['/api/reviews', 'post', ['201', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503']],
      ['/api/agents/{did}/reviews', 'get', ['200', '400', '500', '503']],
      ['/api/reviews/my', 'get', ['200', '400', '401', '500', '503']],
      ['/api/reviews/{review_id}', 'put', ['200', '400', '401', '403', '404', '413', '415', '500', '503']],
      ['/api/agents/{did}/reputation', 'get', ['200', '400', '404', '500', '503']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = document.paths[path]?.[method];
      assert.ok(operation, `${method} ${path}`);
      assert.deepEqual(Object.keys(operation.responses).sort(), statuses.sort(), `${method} ${path}`);
    }
    const parameters = document.paths['/api/agents/search'].get.parameters.map(
      (p: { name: string }) => p.name,
    );
    assert.deepEqual(parameters.sort(), [
      'active_within_days',
      'available',
      'capability',
      'cursor',
      'domain',
      'limit',
      'min_reputation',
      'min_success_rate',
      'offset',
      'order',
      'q',
      'scope',
      'sort',
      'tags',
    ]);
  });
});
