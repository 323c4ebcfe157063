import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { OPERATOR_TOKEN, type SourceStatus, federationSources } from '../../support/federation-status.js';
import { type Entry, CardHost, card } from '../../support/card-host.js';

describe('hostile card hosts are refused with a reason, never a crash', () => {
  const host = new CardHost();
  let registry: TestRegistry;
  const status = async (path: string): Promise<SourceStatus | undefined> => {
    return (await federationSources(registry)).find((candidate) => candidate.id === `a2a:${host.url(path)}`);
  };

  before(async () => {
    await host.start();
    host.files.set('/bad-redirect.json', { status: 302, body: '', location: 'http://[' });
    // Signed, so its canonical JSON is computed; 200,000 levels of brackets, about 400 KB.
    // Written as text: serializing such a value would overflow the test's own stack.
    const deep = card('Deep Planner', 'Nested far too deep');
    deep.signatures = [{ protected: 'e30', signature: 'AA' }];
    const shallow = JSON.stringify(deep);
    host.files.set('/deep.json', {
      body: `${shallow.slice(0, -1)},"extra":${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
    });
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_A2A_CARDS: ['/bad-redirect.json', '/deep.json'].map((path) => host.url(path)).join(','),
      FEDERATION_MAX_RESPONSE_KB: '1024',
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await host.close();
  });

  test('a redirect whose Location is not a URL is a fetch error naming the Location', async () => {
    const found = await status('/bad-redirect.json');
    assert.equal(found?.state, 'error');
    assert.match(found?.last_error ?? '', /redirected to "http:\/\/\[", which is not a URL/);
  });

  test('a card nested deeper than the bound is an invalid card, with no entry', async () => {
    const found = await status('/deep.json');
    assert.equal(found?.state, 'error');
    assert.match(found?.last_error ?? '', /nests arrays and objects more than 64 levels deep/);
    assert.equal(found?.entries, 0);
  });
});

describe('card imports use the webhook network policy', () => {
  test('a card on a private address is refused unless the operator allows private networks', async () => {
    const host = new CardHost();
    await host.start();
    host.files.set('/card.json', { body: JSON.stringify(card('Private', 'On loopback')) });
    const registry = await startRegistry({
      FEDERATION_A2A_CARDS: host.url('/card.json'),
      METRICS_TOKEN: OPERATOR_TOKEN,
    });
    try {
      await registry.ctx.federation.refresh();
      const [only] = await federationSources(registry);
      assert.equal(only?.state, 'error');
      assert.match(only?.last_error ?? '', /non-public address/);
      assert.equal(only?.entries, 0);
      assert.equal(host.requests.length, 0, 'nothing was sent to the private address');
    } finally {
      await registry.close();
      await host.close();
    }
  });
});

describe("a card's Cache-Control freshness is capped, also as stored", () => {
  const host = new CardHost();
  let registry: TestRegistry;
  const fetches = (): number => host.requests.filter((request) => request.path === '/forever.json').length;
  const storedFreshUntil = async (): Promise<number | undefined> => {
    const row = await registry.ctx.database.db
      .selectFrom('remote_sources')
      .select('cursor')
      .where('id', '=', `a2a:${host.url('/forever.json')}`)
      .executeTakeFirstOrThrow();
    return (JSON.parse(row.cursor ?? '{}') as { fresh_until?: number }).fresh_until;
  };

  before(async () => {
    await host.start();
    host.files.set('/forever.json', {
      body: JSON.stringify(card('Forever Fresh', 'Says it never changes')),
      cacheControl: 'public, max-age=99999999999999999999',
    });
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      FEDERATION_A2A_CARDS: host.url('/forever.json'),
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await host.close();
  });

  test('a max-age of twenty digits keeps a card fresh for a day at most', async () => {
    assert.ok(fetches() >= 1);
    const until = await storedFreshUntil();
    assert.ok(until !== undefined && until <= registry.clock.now() + 86_400_000, `fresh_until ${until}`);
    const before = fetches();
    await registry.ctx.federation.refresh();
    assert.equal(fetches(), before, 'fresh: not fetched again within the day');
    registry.clock.advance(86_400_000 + 1000);
    await registry.ctx.federation.refresh();
    assert.equal(fetches(), before + 1, 'fetched again after a day');
  });

  test('a fresh_until stored beyond the cap (by an earlier release) is not trusted: the card is fetched', async () => {
    await registry.ctx.database.db
      .updateTable('remote_sources')
      .set({ cursor: JSON.stringify({ fresh_until: registry.clock.now() + 1e23 }) })
      .where('id', '=', `a2a:${host.url('/forever.json')}`)
      .execute();
    const before = fetches();
    await registry.ctx.federation.refresh();
    assert.equal(fetches(), before + 1);
    const until = await storedFreshUntil();
    assert.ok(until !== undefined && until <= registry.clock.now() + 86_400_000, `fresh_until ${until}`);
  });
});

describe('control characters in a card are cleaned alike on both databases', () => {
  test('U+0000 and other controls are removed, line breaks kept in descriptions only', async () => {
    const host = new CardHost();
    await host.start();
    const nul = card('Nul\u0000Planner\nTwo', 'Plans\u0000 routes\nacross cities\u001b');
    nul.skills = [{ id: 'route\u0000planning', description: 'Plans\u0000', tags: ['ma\u0000ps'] }];
    host.files.set('/nul.json', { body: JSON.stringify(nul) });
    const registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_A2A_CARDS: host.url('/nul.json'),
    });
    try {
      await registry.ctx.federation.refresh();
      const response = await registry.app.inject({
        method: 'GET',
        url: `/api/federation/entries/${encodeURIComponent(`a2a:${host.url('/nul.json')}`)}`,
      });
      assert.equal(response.statusCode, 200, response.body);
      const found = response.json<Entry & { description: string }>();
      assert.equal(found.name, 'NulPlanner Two');
      assert.equal(found.description, 'Plans routes\nacross cities');
      assert.deepEqual(found.capabilities, [{ type: 'routeplanning', description: 'Plans', tags: ['maps'] }]);
      const [only] = await federationSources(registry);
      assert.deepEqual([only?.state, only?.last_error], ['ok', null]);
    } finally {
      await registry.close();
      await host.close();
    }
  });
});
