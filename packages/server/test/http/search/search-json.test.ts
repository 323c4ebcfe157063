import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { capabilitiesDigest } from '@agent-registry/protocol';
import Fastify, { type FastifyInstance } from 'fastify';
import { COMPONENT_SCHEMAS } from '../../../src/faces/rest/openapi/components.js';
import { SearchResponse } from '../../../src/modules/search/search-schemas.js';
import { searchResponseJson } from '../../../src/modules/search/search-json.js';
import type {
  SearchRequest,
  SearchResponse as SearchResult,
} from '../../../src/modules/search/search-schemas.js';
import { registerNamed } from '../../support/discovery-helpers.js';
import { recordClaim } from '../../../src/modules/domains/domain-store.js';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/** What Fastify's serializer for the route's response schema writes for a result given as objects. */
async function schemaSerializer(): Promise<{
  serialize(result: SearchResult): Promise<string>;
  close(): Promise<void>;
}> {
  const app: FastifyInstance = Fastify();
  for (const schema of COMPONENT_SCHEMAS) app.addSchema(schema);
  let next: SearchResult | undefined;
  app.get('/', { schema: { response: { 200: SearchResponse } } }, async () => next);
  await app.ready();
  return {
    serialize: async (result) => {
      next = result;
      return (await app.inject({ method: 'GET', url: '/' })).body;
    },
    close: () => app.close(),
  };
}

describe('GET /api/agents/search writes its body from the stored rows, byte for byte as the schema would', () => {
  let registry: TestRegistry;
  let reference: Awaited<ReturnType<typeof schemaSerializer>>;

  before(async () => {
    registry = await startRegistry();
    reference = await schemaSerializer();
    await registerNamed(registry, 'Quote "Smith" \\ back\\slash', {
      description: 'Line one\nline two\ttabbed, "quoted", emoji 🤖, CJK 翻译, and </script><b>markup</b>',
      capabilities: [
        {
          type: 'translation',
          description: 'Ünïcödé \u2028 separators \u2029 and a backslash \\',
          tags: ['größe', 'ŝpecial'],
          input_schema: {
            type: 'object',
            properties: { text: { type: 'string', maxLength: 5000, description: 'Text "to" translate' } },
            required: ['text'],
            examples: [{ text: 'a\u0001b' }, { amount: 1e21 }, { ratio: 0.1 }, { negative: -0.5 }],
          },
          output_schema: { type: 'object', 'x-ünicode-key': true },
        },
        { type: 'summarise', description: null },
        { type: 'plain' },
      ],
      tags: ['Zürich', 'language', 'emoji🤖'],
    });
    await registerNamed(registry, 'Minimal', {
      description: null,
      capabilities: [{ type: 'plain' }],
      tags: [],
    });
    const plain = await registerNamed(registry, 'Plain agent', { description: 'plain words only' });
    // A hit with verified domains carries them last.
    await registry.ctx.agentWrites.run(async (trx) => {
      await recordClaim(trx, plain.did, 'plain.example', 'https', registry.clock.now());
      await recordClaim(trx, plain.did, 'b.plain.example', 'dns', registry.clock.now());
    });
  });
  after(async () => {
    await reference.close();
    await registry.close();
  });

  const requests: [string, SearchRequest][] = [
    ['', {}],
    ['q=translation', { q: 'translation' }],
    ['q=plain&sort=created_at&order=asc', { q: 'plain', sort: 'created_at', order: 'asc' }],
    ['capability=plain&limit=1', { capability: 'plain', limit: 1 }],
    ['tags=z%C3%BCrich', { tags: 'zürich' }],
    ['q=nothingmatchesthis', { q: 'nothingmatchesthis' }],
  ];
  for (const [query, request] of requests) {
    test(`?${query}`, async () => {
      const response = await registry.app.inject({ method: 'GET', url: `/api/agents/search?${query}` });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
      const expected = await reference.serialize(await registry.ctx.search.search(request));
      assert.equal(response.body, expected);
      assert.ok(JSON.parse(response.body).agents.length > 0 || query.includes('nothingmatches'));
      if (query.startsWith('q=plain'))
        assert.match(response.body, /"domains":\["b\.plain\.example","plain\.example"\]\}/);
    });
  }

  test('numbers as the schema writes them: fractions kept, integers truncated, infinities null', async () => {
    const row = {
      did: 'did:web:example.com:agent:1',
      name: 'Numbers',
      description: null,
      capabilities: '[{"type":"x"}]',
      tags: '[]',
      reputation_score: 73.456789,
      average_rating: Number.POSITIVE_INFINITY,
      total_reviews: 7,
      created_at: 1764000000123.9,
      updated_at: 1764000000123,
      status: 'active' as const,
      change_seq: 42,
    };
    const remote = {
      ...row,
      did: 'a2a:https://agents.example/.well-known/agent-card.json',
      remote: {
        home_registry: 'https://agents.example',
        provenance:
          '{"kind":"imported","home_registry":"https://agents.example","source_url":"https://agents.example/.well-known/agent-card.json","format":"a2a-agent-card","verification":"unsigned","fetched_at":1764000000000}',
        observed: {
          status: 'answers' as const,
          checked_at: 1764000000500,
          last_answered_at: 1764000000500,
          first_seen_at: 1764000000100,
          tools_count: null,
          tools_digest: null,
          tools_changed_at: null,
        },
      },
    };
    const homeReport = {
      reported_by: 'https://peer.example',
      reputation_score: 61.25,
      average_rating: 8.5,
      total_reviews: 4.7,
      read_at: 1764000000000,
      availability: { status: 'online' as const, last_seen_at: 1764000000400 },
      service_record: {
        invocations_30d: 12,
        success_rate_30d: 0.75,
        latency_p50_ms_30d: null,
        uptime_24h: Number.POSITIVE_INFINITY,
      },
      checked_at: 1764000000600.5,
    };
    const mirrored = {
      ...row,
      did: 'did:web:peer.example:agent:2',
      remote: {
        home_registry: 'https://peer.example',
        provenance:
          '{"kind":"mirrored","home_registry":"https://peer.example","checkpoint":{"origin":"peer.example/log","size":3,"root_hash":"cm9vdA=="},"state":"verified","verified_at":1764000000000}',
        home: homeReport,
      },
    };
    const home = 'https://registry.example';
    const page = {
      rows: [row, remote, mirrored],
      total: 21.5,
      limit: 20,
      offset: 0,
      next_cursor: 'abc"def',
      home_registry: home,
      // The remote entry's did is never observed here, whatever the map says.
      domains: new Map(),
      availability: new Map([
        [row.did, { status: 'online' as const, last_seen_at: 1764000000999 }],
        [remote.did, { status: 'online' as const, last_seen_at: 1 }],
      ]),
    };
    const { remote: origin, ...remoteRow } = remote;
    const { remote: peerOrigin, ...mirroredRow } = mirrored;
    const expected = await reference.serialize({
      agents: [
        {
          ...row,
          capabilities: [{ type: 'x' }],
          tags: [],
          status: 'active',
          home_registry: home,
          provenance: { kind: 'registered', home_registry: home },
          capabilities_digest: capabilitiesDigest([{ type: 'x' }]),
          availability: { status: 'online', last_seen_at: 1764000000999 },
        },
        {
          ...remoteRow,
          capabilities: [{ type: 'x' }],
          tags: [],
          status: 'active',
          home_registry: origin.home_registry,
          provenance: JSON.parse(origin.provenance) as { kind: 'imported'; home_registry: string },
          observed: origin.observed,
          availability: { status: 'unknown', last_seen_at: null },
        },
        {
          ...mirroredRow,
          capabilities: [{ type: 'x' }],
          tags: [],
          status: 'active',
          home_registry: peerOrigin.home_registry,
          provenance: JSON.parse(peerOrigin.provenance) as { kind: 'mirrored'; home_registry: string },
          availability: { status: 'unknown', last_seen_at: null },
          home: peerOrigin.home,
        },
      ],
      total: page.total,
      limit: page.limit,
      offset: page.offset,
      next_cursor: page.next_cursor,
    });
    assert.equal(searchResponseJson(page), expected);
  });
});
