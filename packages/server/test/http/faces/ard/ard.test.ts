import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, secp256k1Agent } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { registerNamed, profileOf, startSecondNode } from '../../../support/discovery-helpers.js';
import { startListeningRegistry, type ListeningRegistry } from '../../../support/faces-helpers.js';
import {
  type Entry,
  type SearchAnswer,
  type ErrorAnswer,
  REMOTE_DIDS,
  putRemoteWeatherAgents,
} from '../../../support/ard-answers.js';

import { ARD_BODY_EXAMPLES } from '../../../../src/modules/ard/schemas.js';

const A2A = 'application/a2a-agent-card+json';
/** ard-spec's conformance-test script (conformance/bin/ of an ard-spec checkout), when the environment names it. */
const CONFORMANCE_TOOL = process.env.ARD_CONFORMANCE_TOOL;
/** Enough agents that the published catalog needs a second page (100 per page). */
const CATALOG_AGENTS = 101;

describe('ARD: publisher files and registry API', () => {
  let registry: ListeningRegistry;
  let host: string;
  let weather: Registered;
  let forecast: Registered;
  let wallet: Registered;

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${registry.url}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined,
    };
  };
  const search = (body: unknown) => call('POST', '/ard/search', body);
  const urnOf = (did: string) =>
    did.startsWith('did:web:')
      ? `urn:air:${host}:agents:${did.split(':').at(-1)}`
      : `urn:air:${host}:agents:${did.slice('did:'.length)}`;
  /** An ARD error: the envelope, the status, never a 5xx. */
  const refused = (answer: { status: number; json: unknown }, status: number, errorCode: string) => {
    assert.equal(answer.status, status, JSON.stringify(answer.json));
    const body = answer.json as ErrorAnswer;
    assert.equal(body.errorCode, errorCode);
    assert.equal(typeof body.message, 'string');
    assert.ok(body.message.length > 10, body.message);
    return body.message;
  };

  before(async () => {
    registry = await startListeningRegistry();
    host = new URL(registry.url).hostname;
    weather = await registerNamed(registry, 'Weather Now', {
      description: 'Current weather for any city. Uses open data.',
      capabilities: [{ type: 'weather', description: 'Get the current weather for a city.' }],
      tags: ['weather', 'maps'],
    });
    forecast = await registerNamed(registry, 'Weather Forecast', {
      description: 'Five-day weather forecasts',
      capabilities: [{ type: 'forecast' }],
      tags: ['weather', 'forecast'],
    });
    wallet = await register(
      registry,
      secp256k1Agent(),
      profileOf('Chain Weather', { capabilities: [{ type: 'weather' }], tags: ['chain'] }),
    );
    for (let index = 3; index < CATALOG_AGENTS; index += 1) {
      await registerNamed(registry, `Filler ${index}`, { tags: ['filler'] });
    }
    // Every ARD answer below (and the conformance run) is made with remote entries in the database.
    await putRemoteWeatherAgents(registry);
  });
  after(async () => registry.close());

  test('remote entries are searchable with scope=federated, and ARD publishes none of them', async () => {
    const federated = await call('GET', '/api/agents/search?q=weather&scope=federated&limit=50');
    assert.equal(federated.status, 200, federated.text);
    const remote = federated.json.agents
      .map((agent: { did: string }) => agent.did)
      .filter((did: string) => REMOTE_DIDS.includes(did));
    assert.deepEqual(remote.sort(), REMOTE_DIDS);
    const ard = (await search({ query: { text: 'weather' }, pageSize: 50 })).json as SearchAnswer;
    assert.equal(ard.results.length, 3);
    assert.ok(ard.results.every((result) => !REMOTE_DIDS.includes(result.trustManifest.identity)));
    const listed = await call('GET', '/ard/agents?pageSize=100');
    assert.equal(listed.json.total, CATALOG_AGENTS);
    refused(await call('GET', '/ard/agents/urn:air:peer.example:agents:0a'), 404, 'NOT_FOUND');
  });

  test('the home page links the publisher files; both are AI Catalogs naming the search service', async () => {
    const home = await call('GET', '/');
    const link = home.headers.get('link') ?? '';
    assert.match(link, /<[^>]+\/\.well-known\/ai-catalog\.json>; rel="ai-catalog"/);
    assert.match(link, /<[^>]+\/\.well-known\/ard\.json>; rel="ard"/);
    const catalog = await call('GET', '/.well-known/ai-catalog.json');
    assert.equal(catalog.status, 200);
    assert.match(catalog.headers.get('content-type') ?? '', /^application\/ai-catalog\+json/);
    assert.equal(catalog.json.specVersion, '1.0');
    assert.equal(catalog.json.host.identifier, `did:web:${registry.config.identity.didWebDomain}`);
    const registryEntry = catalog.json.entries.find(
      (entry: Entry) => entry.type === 'application/ai-registry+json',
    );
    assert.equal(registryEntry.url, `${registry.url}/ard`);
    const pages = catalog.json.entries.find((entry: Entry) => entry.type === 'application/ai-catalog+json');
    assert.equal(pages.url, `${registry.url}/ard/catalog`);
    const ard = await call('GET', '/.well-known/ard.json');
    assert.equal(ard.status, 200);
    assert.deepEqual(ard.json.entries, catalog.json.entries);
    const etag = catalog.headers.get('etag') ?? '';
    assert.ok(etag !== '');
    const again = await call('GET', '/.well-known/ai-catalog.json', undefined, { 'if-none-match': etag });
    assert.equal(again.status, 304);
  });

  test('catalog pages are bounded and chained; together they hold every active agent once', async () => {
    const seen = new Set<string>();
    let url: string | undefined = `${registry.url}/ard/catalog`;
    let pages = 0;
    while (url !== undefined) {
      const page = await call('GET', url.slice(registry.url.length));
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^application\/ai-catalog\+json/);
      assert.ok(page.headers.get('etag'));
      const agents = (page.json.entries as Entry[]).filter((entry) => entry.type === A2A);
      assert.ok(agents.length <= 100);
      for (const entry of agents) {
        assert.ok(!seen.has(entry.identifier), entry.identifier);
        seen.add(entry.identifier);
      }
      const next = (page.json.entries as Entry[]).find(
        (entry) => entry.type === 'application/ai-catalog+json',
      );
      url = next?.url;
      pages += 1;
    }
    assert.equal(pages, 2);
    assert.equal(seen.size, CATALOG_AGENTS);
    assert.ok(seen.has(urnOf(wallet.did)));
  });

  test('one entry per agent: the URN maps to the DID and back, for did:web and did:pkh', async () => {
    for (const agent of [weather, wallet]) {
      const urn = urnOf(agent.did);
      const got = await call('GET', `/ard/agents/${encodeURIComponent(urn)}`);
      assert.equal(got.status, 200, got.text);
      const entry = got.json as Entry;
      assert.equal(entry.identifier, urn);
      assert.match(entry.identifier, /^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$/);
      assert.equal(entry.trustManifest.identity, agent.did);
      assert.equal(entry.trustManifest.identityType, 'did');
      assert.equal(entry.type, A2A);
      assert.equal(
        entry.url,
        `${registry.url}/a2a/${encodeURIComponent(agent.did)}/.well-known/agent-card.json`,
      );
      assert.ok(entry.representativeQueries.length >= 2 && entry.representativeQueries.length <= 5);
      assert.equal(entry.publisher, host);
      assert.ok(!Number.isNaN(Date.parse(entry.updatedAt)));
      const card = await fetch(entry.url);
      assert.equal(card.status, 200);
      // Unencoded colons name the same entry.
      const plain = await call('GET', `/ard/agents/${urn}`);
      assert.deepEqual(plain.json, entry);
    }
    const entry = (await call('GET', `/ard/agents/${urnOf(weather.did)}`)).json as Entry;
    assert.deepEqual(entry.capabilities, ['weather']);
    assert.deepEqual(entry.tags, ['weather', 'maps']);
    assert.ok(entry.representativeQueries.includes('Get the current weather for a city'));
    assert.deepEqual(
      entry.trustManifest.attestations.map((attestation) => attestation.type),
      ['agent-registry:service-record', 'agent-registry:capability-schemas'],
    );
  });

  test('each entry says its provenance: in ARD terms in the trust manifest, and as the registry says it', async () => {
    const urn = urnOf(weather.did);
    const profileUrl = `${registry.url}/api/agents/${encodeURIComponent(weather.did)}`;
    const views = [
      (await call('GET', `/ard/agents/${urn}`)).json as Entry,
      ((await call('POST', '/ard/search', { query: { text: 'weather' } })).json as SearchAnswer).results.find(
        (result) => result.identifier === urn,
      ),
    ];
    for (const entry of views) {
      assert.ok(entry !== undefined);
      assert.deepEqual(entry.trustManifest.provenance, [{ relation: 'publishedFrom', sourceId: profileUrl }]);
      assert.equal(entry.metadata.profileUrl, profileUrl);
      // What the profile's provenance object says, as scalars.
      const profile = (await (await fetch(profileUrl)).json()) as {
        provenance: { kind: string; home_registry: string };
      };
      assert.equal(entry.metadata.provenanceKind, profile.provenance.kind);
      assert.equal(entry.metadata.homeRegistry, profile.provenance.home_registry);
      assert.equal(entry.metadata.provenanceKind, 'registered');
      assert.equal(entry.metadata.homeRegistry, registry.url);
    }
  });

  test('every metadata value is a string, number, boolean or null, as the AI Catalog schema requires', async () => {
    const entries: Entry[] = [];
    let url: string | undefined = `${registry.url}/ard/catalog`;
    while (url !== undefined) {
      const page = (await (await fetch(url)).json()) as { entries: (Entry & { url: string })[] };
      const agents = page.entries.filter((entry) => entry.type !== 'application/ai-catalog+json');
      entries.push(...agents);
      url = page.entries.find((entry) => entry.type === 'application/ai-catalog+json')?.url;
    }
    assert.equal(entries.length, CATALOG_AGENTS);
    for (const entry of entries) {
      for (const [key, value] of Object.entries(entry.metadata)) {
        assert.ok(
          value === null || ['string', 'number', 'boolean'].includes(typeof value),
          `${entry.identifier}: metadata.${key} is ${JSON.stringify(value)}`,
        );
      }
    }
  });

  test('GET /agents/{identifier}: unknown 404, malformed 400, another publisher 404, in the ARD envelope', async () => {
    refused(await call('GET', `/ard/agents/urn:air:${host}:agents:${'0'.repeat(32)}`), 404, 'NOT_FOUND');
    refused(await call('GET', '/ard/agents/not-a-urn'), 400, 'INVALID_ARGUMENT');
    refused(await call('GET', `/ard/agents/urn:air:${host}:agents:has%20space`), 400, 'INVALID_ARGUMENT');
    refused(await call('GET', `/ard/agents/urn:air:${host}:agents:..%2F..%2Fetc`), 400, 'INVALID_ARGUMENT');
    refused(await call('GET', `/ard/agents/urn:air:${host}:agents:zz`), 400, 'INVALID_ARGUMENT');
    refused(await call('GET', '/ard/agents/urn%ZZ'), 400, 'INVALID_ARGUMENT');
    const foreign = refused(
      await call('GET', `/ard/agents/urn:air:example.com:agents:${'a'.repeat(32)}`),
      404,
      'NOT_FOUND',
    );
    assert.match(foreign, /example\.com/);
    refused(
      await call('GET', `/ard/agents/urn:air:${host}:agents:${'x'.repeat(300)}`),
      400,
      'INVALID_ARGUMENT',
    );
    refused(await call('GET', '/ard/no-such-route'), 404, 'NOT_FOUND');
    // A deactivated agent is no longer published.
    const gone = await registerNamed(registry, 'Gone Soon');
    // Read once first, so the entry is cached when the agent is deactivated.
    assert.equal((await call('GET', `/ard/agents/${urnOf(gone.did)}`)).status, 200);
    const deleted = await fetch(`${registry.url}${agentPath(gone.did)}`, {
      method: 'DELETE',
      headers: bearer(gone.token),
    });
    assert.equal(deleted.status, 200);
    refused(await call('GET', `/ard/agents/${urnOf(gone.did)}`), 404, 'NOT_FOUND');
    // An updated agent's entry is rendered afresh, though the earlier one is cached.
    const moved = await registerNamed(registry, 'Changes Soon');
    assert.notEqual((await call('GET', `/ard/agents/${urnOf(moved.did)}`)).json.description, 'Now says more');
    const updated = await fetch(`${registry.url}${agentPath(moved.did)}`, {
      method: 'PUT',
      headers: { ...bearer(moved.token), 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'Now says more' }),
    });
    assert.equal(updated.status, 200);
    assert.equal((await call('GET', `/ard/agents/${urnOf(moved.did)}`)).json.description, 'Now says more');
  });

  test('POST /search runs the registry search: the same agents, in the same order, as ARD entries', async () => {
    const ours = await call('GET', '/api/agents/search?q=weather&limit=50');
    const ard = (await search({ query: { text: 'weather' }, pageSize: 50 })).json as SearchAnswer;
    assert.deepEqual(
      ard.results.map((result) => result.trustManifest.identity),
      ours.json.agents.map((agent: { did: string }) => agent.did),
    );
    assert.equal(ard.results.length, 3);
    let last = 101;
    for (const result of ard.results) {
      assert.ok(Number.isInteger(result.score) && result.score >= 0 && result.score <= 100);
      assert.ok(result.score <= last);
      last = result.score;
      assert.equal(result.source, `${registry.url}/ard`);
      const { score: _score, source: _source, ...entry } = result;
      assert.deepEqual(entry, (await call('GET', `/ard/agents/${result.identifier}`)).json);
    }
    assert.equal(ard.results[0]?.score, 100);
  });

  test('filters: OR within a key, AND across keys, media type and publisher, scalar or array', async () => {
    const dids = async (filter: Record<string, unknown>) =>
      ((await search({ query: { text: 'weather', filter } })).json as SearchAnswer).results
        .map((result) => result.trustManifest.identity)
        .sort();
    assert.deepEqual(await dids({ tags: ['maps', 'forecast'] }), [weather.did, forecast.did].sort());
    assert.deepEqual(await dids({ tags: 'maps' }), [weather.did]);
    assert.deepEqual(
      await dids({ tags: ['maps', 'chain'], capabilities: 'weather' }),
      [weather.did, wallet.did].sort(),
    );
    assert.deepEqual(await dids({ tags: ['forecast'], capabilities: ['weather'] }), []);
    assert.deepEqual(await dids({ type: ['application/mcp-server-card+json'] }), []);
    assert.equal((await dids({ type: [A2A, 'application/mcp-server-card+json'] })).length, 3);
    assert.deepEqual(await dids({ publisher: 'example.com' }), []);
    assert.equal((await dids({ publisher: host })).length, 3);
    assert.equal((await dids({ 'trustManifest.identityType': 'did' })).length, 3);
    assert.equal(
      (await dids({ 'trustManifest.attestations.type': ['SOC2-Type2', 'agent-registry:service-record'] }))
        .length,
      3,
    );
    assert.deepEqual(await dids({ 'trustManifest.attestations.type': 'SOC2-Type2' }), []);
  });

  test('pageSize and pageToken page through every match once; no referrals without ARD_REFERRALS', async () => {
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const answer = await search({
        query: { text: 'filler' },
        pageSize: 40,
        federation: 'referrals',
        ...(pageToken ? { pageToken } : {}),
      });
      assert.equal(answer.status, 200, answer.text);
      const body = answer.json as SearchAnswer;
      // ARD's CDDL: a referrals member holds at least one registry, so none configured means no member.
      assert.ok(!('referrals' in body), answer.text);
      assert.ok(body.results.length <= 40);
      seen.push(...body.results.map((result) => result.identifier));
      pageToken = body.pageToken;
    } while (pageToken !== undefined);
    assert.equal(seen.length, CATALOG_AGENTS - 3);
    assert.equal(new Set(seen).size, seen.length);
  });

  test('GET /agents lists every active agent, paged by pageToken', async () => {
    const first = await call('GET', '/ard/agents?pageSize=2');
    assert.equal(first.status, 200);
    assert.equal(first.json.items.length, 2);
    assert.ok(first.json.total >= CATALOG_AGENTS);
    const second = await call(
      'GET',
      `/ard/agents?pageSize=2&pageToken=${encodeURIComponent(first.json.pageToken)}`,
    );
    assert.equal(second.status, 200);
    assert.notDeepEqual(second.json.items[0].identifier, first.json.items[0].identifier);
    refused(
      await call('GET', `/ard/agents?pageSize=3&pageToken=${encodeURIComponent(first.json.pageToken)}`),
      400,
      'INVALID_ARGUMENT',
    );
    refused(await call('GET', '/ard/agents?pageSize=1000'), 400, 'INVALID_ARGUMENT');
    refused(await call('GET', '/ard/agents?sort=name'), 400, 'INVALID_ARGUMENT');
  });

  test("GET /agents takes ARD's filter expression: fields, AND, comma alternatives, times", async () => {
    const list = (filter: string, extra = '') =>
      call('GET', `/ard/agents?filter=${encodeURIComponent(filter)}${extra}`);
    /** Every page of a filtered listing, by pageToken: the identifiers, each page's answer checked. */
    const walk = async (filter: string, pageSize: number) => {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await list(
          filter,
          `&pageSize=${pageSize}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`,
        );
        assert.equal(page.status, 200, page.text);
        assert.ok(page.json.items.length <= pageSize);
        seen.push(...(page.json.items as Entry[]).map((entry) => entry.identifier));
        token = page.json.pageToken;
        pages += 1;
      } while (token !== undefined && pages < 20);
      return seen;
    };
    const weathers = [weather, forecast, wallet].map((agent) => urnOf(agent.did)).sort();
    // displayName: a part of the name, any case; one entry a page until the last.
    assert.deepEqual((await walk("displayName = 'WEATHER'", 1)).sort(), weathers);
    const firstPage = await list("displayName = 'weather'", '&pageSize=2');
    assert.equal(firstPage.json.items.length, 2);
    assert.ok(!('total' in firstPage.json), firstPage.text);
    // type and publisherId: comma-separated alternatives; a value this registry never has matches nothing.
    const none = await list("type = 'application/mcp-server-card+json'");
    assert.deepEqual(none.json, { items: [], total: 0 });
    const either = await list(
      `type = 'application/mcp-server-card+json, ${A2A}' AND publisherId = '${host}'`,
    );
    assert.equal(either.status, 200, either.text);
    assert.ok(either.json.total >= CATALOG_AGENTS);
    assert.deepEqual((await list("publisherId = 'example.com'")).json.items, []);
    // createdAfter and updatedAfter: strictly after the instant, with AND across fields.
    const before = new Date(registry.clock.now()).toISOString();
    registry.clock.advance(60_000);
    const late = await registerNamed(registry, 'Late Arrival', { tags: ['late'] });
    const lateOnly = [urnOf(late.did)];
    assert.deepEqual(await walk(`createdAfter > '${before}'`, 20), lateOnly);
    assert.deepEqual(await walk(`createdAfter > '${before}' AND displayName = "ARRIVAL"`, 20), lateOnly);
    assert.deepEqual(await walk(`createdAfter > '${before}' and displayName = 'forecast'`, 20), []);
    assert.deepEqual(await walk(`updatedAfter > '${before}'`, 20), lateOnly);
    const beforeUpdate = new Date(registry.clock.now()).toISOString();
    registry.clock.advance(60_000);
    assert.deepEqual(await walk(`updatedAfter > '${beforeUpdate}'`, 20), []);
    const moved = await fetch(`${registry.url}${agentPath(weather.did)}`, {
      method: 'PUT',
      headers: { ...bearer(weather.token), 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'Current weather for any city. Uses open data, updated.' }),
    });
    assert.equal(moved.status, 200);
    assert.deepEqual(await walk(`updatedAfter = '${beforeUpdate}'`, 20), [urnOf(weather.did)]);
    assert.deepEqual(await walk(`createdAfter > '2000-01-01'  AND  displayName = 'it''s'`, 20), []);
    // A token continues only the listing it came from.
    const token = (await list("displayName = 'weather'", '&pageSize=1')).json.pageToken as string;
    refused(
      await list("displayName = 'forecast'", `&pageSize=1&pageToken=${encodeURIComponent(token)}`),
      400,
      'INVALID_ARGUMENT',
    );
    refused(
      await call('GET', `/ard/agents?pageSize=1&pageToken=${encodeURIComponent(token)}`),
      400,
      'INVALID_ARGUMENT',
    );
    // Bad expressions: each a 400 in ARD's envelope saying what to write.
    const bad: [string, RegExp][] = [
      ["colour = 'red'", /field "colour" is not supported; use displayName, type/],
      ['type = application/a2a-agent-card+json', /expected a value in quotes after type =/],
      ["displayName = 'open", /no closing '/],
      ["type = 'a' OR type = 'b'", /expected AND at character 12/],
      ["type = 'a' AND type = 'b'", /type appears twice/],
      ["displayName > 'x'", /expected = after displayName/],
      ["createdAfter > 'yesterday'", /ISO 8601/],
      ["createdAfter > '2026-02-30'", /ISO 8601/],
      ["updatedAfter > '2026-02-30T10:00:00Z'", /ISO 8601/],
      ["type = ''", /is empty/],
      ["type = 'a,,b'", /empty value between its commas/],
      ["type = 'a' AND", /expected a field name at the end/],
      ['(type = "a")', /expected a field name at character 1/],
      [`displayName = '${'x'.repeat(600)}'`, /filter/],
    ];
    for (const [expression, message] of bad) {
      assert.match(refused(await list(expression), 400, 'INVALID_ARGUMENT'), message, expression);
    }
    refused(await call('GET', '/ard/agents?orderBy=displayName'), 400, 'INVALID_ARGUMENT');
    assert.equal((await call('GET', '/ard/agents?orderBy=createdAt%20ASC')).status, 200);
  });

  test('POST /explore counts type, publisher, tags and capabilities over the whole matched set', async () => {
    const answer = await call('POST', '/ard/explore', {
      query: { text: 'weather' },
      resultType: {
        facets: [{ field: 'type' }, { field: 'tags' }, { field: 'capabilities' }, { field: 'publisher' }],
      },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.resultType, 'facets');
    assert.deepEqual(answer.json.facets.type.buckets, [{ value: A2A, count: 3 }]);
    assert.deepEqual(answer.json.facets.publisher.buckets, [{ value: host, count: 3 }]);
    assert.deepEqual(answer.json.facets.tags.buckets[0], { value: 'weather', count: 2 });
    assert.deepEqual(answer.json.facets.capabilities.buckets, [
      { value: 'weather', count: 2 },
      { value: 'forecast', count: 1 },
    ]);
    const everything = await call('POST', '/ard/explore', {
      resultType: { facets: [{ field: 'tags', limit: 1 }] },
    });
    assert.deepEqual(everything.json.facets.tags.buckets, [{ value: 'filler', count: CATALOG_AGENTS - 3 }]);
    refused(
      await call('POST', '/ard/explore', { resultType: { facets: [{ field: 'nope' }] } }),
      400,
      'INVALID_ARGUMENT',
    );
  });

  test('a malformed body of search or explore is refused with the body the route expects', async () => {
    const searchMessage = refused(await search({ query: {} }), 400, 'INVALID_ARGUMENT');
    assert.ok(searchMessage.endsWith(`; the body is JSON like ${ARD_BODY_EXAMPLES.search}`), searchMessage);
    const unparsed = refused(await search('{"query": '), 400, 'INVALID_ARGUMENT');
    assert.ok(unparsed.includes(ARD_BODY_EXAMPLES.search), unparsed);
    const exploreMessage = refused(
      await call('POST', '/ard/explore', { query: { text: 'x' } }),
      400,
      'INVALID_ARGUMENT',
    );
    assert.ok(exploreMessage.includes(ARD_BODY_EXAMPLES.explore), exploreMessage);
    // The examples themselves are accepted.
    assert.equal((await search(JSON.parse(ARD_BODY_EXAMPLES.search) as unknown)).status, 200);
    assert.equal(
      (await call('POST', '/ard/explore', JSON.parse(ARD_BODY_EXAMPLES.explore) as unknown)).status,
      200,
    );
  });

  test('bad input gets the ARD envelope with a 4xx, never a 5xx', async () => {
    refused(await search('{"query": {"text": "weather"'), 400, 'INVALID_ARGUMENT');
    refused(
      await search({ query: { text: 'weather', filter: { colour: ['red'] } } }),
      400,
      'INVALID_ARGUMENT',
    );
    refused(await search({ query: { text: 'w'.repeat(5000) } }), 400, 'INVALID_ARGUMENT');
    refused(
      await search({ query: { text: 'weather' }, pageToken: 'eyJwYWdlIjogMn0=' }),
      400,
      'INVALID_ARGUMENT',
    );
    const other = (await search({ query: { text: 'filler' }, pageSize: 5 })).json as SearchAnswer;
    assert.ok(other.pageToken);
    refused(
      await search({ query: { text: 'weather' }, pageSize: 5, pageToken: other.pageToken }),
      400,
      'INVALID_ARGUMENT',
    );
    refused(await search({ query: {} }), 400, 'INVALID_ARGUMENT');
    refused(await search({ query: { text: 'weather' }, extra: 1 }), 400, 'INVALID_ARGUMENT');
    refused(await search({ query: { text: 'weather' }, federation: 'everywhere' }), 400, 'INVALID_ARGUMENT');
    refused(await search({ query: { text: '!!!' } }), 400, 'INVALID_ARGUMENT');
    refused(
      await search({ query: { text: 'weather', filter: { capabilities: ['a', 'b'] } } }),
      400,
      'INVALID_ARGUMENT',
    );
    refused(await search({ query: { text: 'weather', filter: { tags: [1] } } }), 400, 'INVALID_ARGUMENT');
    refused(await search({ query: { text: 'weather', filter: { tags: 'a,b' } } }), 400, 'INVALID_ARGUMENT');
    refused(await search('[]'), 400, 'INVALID_ARGUMENT');
    refused(
      await call('POST', '/ard/search', 'text', { 'content-type': 'text/plain' }),
      415,
      'INVALID_ARGUMENT',
    );
  });

  test('another node on the same database answers ARD for an agent registered on this one', async () => {
    const node = await startSecondNode(registry);
    try {
      const sailor = await registerNamed(registry, 'Harbour Sailor', { tags: ['sailing'] });
      const found = await node.app.inject({
        method: 'POST',
        url: '/ard/search',
        payload: { query: { text: 'harbour sailor', filter: { tags: 'sailing' } } },
      });
      assert.equal(found.statusCode, 200, found.body);
      assert.deepEqual(
        (found.json() as SearchAnswer).results.map((result) => result.identifier),
        [urnOf(sailor.did)],
      );
      const entry = await node.app.inject({ url: `/ard/agents/${urnOf(sailor.did)}` });
      assert.equal(entry.statusCode, 200, entry.body);
    } finally {
      await node.close();
    }
  });

  test('an update within the same millisecond shows in search, the listing and the catalog', async () => {
    // The test clock stands still: the update keeps the registration's updated_at, so only the agent's
    // change number tells the two versions apart.
    const agent = await registerNamed(registry, 'Quarry Surveyor', {
      description: 'Surveys quarries before the update',
      tags: ['quarry'],
    });
    const urn = urnOf(agent.did);
    const inSearch = async () =>
      ((await search({ query: { text: 'quarry surveyor' } })).json as SearchAnswer).results.find(
        (result) => result.identifier === urn,
      );
    const inList = async () => {
      let path: string | undefined = '/ard/agents?pageSize=100';
      while (path !== undefined) {
        const page = await call('GET', path);
        assert.equal(page.status, 200, page.text);
        const found = (page.json.items as Entry[]).find((entry) => entry.identifier === urn);
        if (found !== undefined) return found;
        path =
          page.json.pageToken === undefined
            ? undefined
            : `/ard/agents?pageSize=100&pageToken=${encodeURIComponent(page.json.pageToken)}`;
      }
      return undefined;
    };
    const inCatalog = async () => {
      let url: string | undefined = `${registry.url}/ard/catalog`;
      while (url !== undefined) {
        const page = await call('GET', url.slice(registry.url.length));
        assert.equal(page.status, 200, page.text);
        const entries = page.json.entries as Entry[];
        const found = entries.find((entry) => entry.identifier === urn);
        if (found !== undefined) return found;
        url = entries.find((entry) => entry.type === 'application/ai-catalog+json')?.url;
      }
      return undefined;
    };
    // Each view renders (and keeps) the first version.
    const before = await inSearch();
    assert.equal(before?.description, 'Surveys quarries before the update');
    assert.equal((await inList())?.description, 'Surveys quarries before the update');
    assert.equal((await inCatalog())?.description, 'Surveys quarries before the update');
    const updated = await fetch(`${registry.url}${agentPath(agent.did)}`, {
      method: 'PUT',
      headers: { ...bearer(agent.token), 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'Surveys quarries after the update' }),
    });
    assert.equal(updated.status, 200);
    const after = await inSearch();
    assert.equal(after?.updatedAt, before?.updatedAt);
    assert.equal(after?.description, 'Surveys quarries after the update');
    assert.equal((await inList())?.description, 'Surveys quarries after the update');
    assert.equal((await inCatalog())?.description, 'Surveys quarries after the update');
    assert.equal(
      (await call('GET', `/ard/agents/${urn}`)).json.description,
      'Surveys quarries after the update',
    );
  });

  test(
    "ard-spec's conformance tool passes in registry mode and, on every publisher file, manifest mode",
    {
      skip:
        CONFORMANCE_TOOL === undefined
          ? 'set ARD_CONFORMANCE_TOOL to conformance/bin/conformance-test'
          : false,
    },
    async () => {
      const run = promisify(execFile);
      const targets: [string, string][] = [
        ['registry', `${registry.url}/ard`],
        ['manifest', `${registry.url}/.well-known/ai-catalog.json`],
        ['manifest', `${registry.url}/.well-known/ard.json`],
        ['manifest', `${registry.url}/ard/catalog`],
      ];
      for (const [mode, target] of targets) {
        const { stdout } = await run('python3', [CONFORMANCE_TOOL ?? '', mode, target]);
        assert.match(stdout, /CONFORMANCE STATUS: PASS/, stdout);
        // No warning either: a copy of the script without ard-spec's spec/schemas beside it skips the
        // strict schema check with a warning, and would pass what the schema refuses.
        assert.match(stdout, /0 critical specification errors and 0 warnings/, stdout);
      }
    },
  );
});
