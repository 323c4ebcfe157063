import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import type { Provenance } from '../../../src/modules/agents/provenance-schemas.js';
import { OPERATOR_TOKEN, type SourceStatus, federationSources } from '../../support/federation-status.js';

const OFFICIAL = 'io.modelcontextprotocol.registry/official';

interface Version {
  name: string;
  version: string;
  description: string;
  title?: string;
  remotes?: { type: string; url: string }[];
  status: 'active' | 'deprecated' | 'deleted';
  updatedAt: string;
  isLatest: boolean;
}

type Mode =
  | 'normal'
  | 'garbage'
  | 'wrong-shape'
  | 'one-malformed'
  | 'loop'
  | 'huge'
  | 'drip'
  | 'long-cursor'
  | 'overfull';

/**
 * An MCP Registry built from the shapes of its published OpenAPI (GET /v0.1/servers: ServerList of
 * ServerResponse, metadata.nextCursor, updated_since returning deleted versions too), with modes that
 * misbehave on purpose.
 */
class FakeMcpRegistry {
  versions: Version[] = [];
  mode: Mode = 'normal';
  readonly requests: URL[] = [];
  /** Called with each request before it is answered: a change made here lands mid-round. */
  onRequest: ((url: URL) => void) | undefined;
  private server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    this.requests.push(url);
    this.onRequest?.(url);
    if (url.pathname !== '/v0.1/servers') {
      response.writeHead(404).end('{"error":"not found"}');
      return;
    }
    if (this.mode === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"servers": [tru');
      return;
    }
    if (this.mode === 'huge') {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ servers: [], pad: 'x'.repeat(64 * 1024) }));
      return;
    }
    if (this.mode === 'drip') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"servers":[');
      const timer = setInterval(() => response.write(' '), 200);
      response.on('close', () => clearInterval(timer));
      return;
    }
    const since = url.searchParams.get('updated_since');
    const limit = Number(url.searchParams.get('limit') ?? '30');
    const start = Number(url.searchParams.get('cursor') ?? '0');
    const matching = this.versions.filter((version) =>
      since === null ? version.status !== 'deleted' : version.updatedAt > since,
    );
    // overfull: more servers than the limit asked for (the versions list holds more than a page).
    const page =
      this.mode === 'overfull' ? this.versions.slice(0, limit + 1) : matching.slice(start, start + limit);
    // one-malformed: a server without a version second on each page, between good ones.
    const malformed =
      this.mode === 'one-malformed' ? [{ server: { name: 'io.example/no-version', description: 'x' } }] : [];
    const nextCursor =
      this.mode === 'loop'
        ? '0'
        : this.mode === 'long-cursor'
          ? // A fresh cursor over the bound on every page: following it would grow without end.
            `${start + limit}:${'x'.repeat(2000)}`
          : start + limit < matching.length
            ? String(start + limit)
            : undefined;
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        servers: page.flatMap((version, index) => [
          ...(index === 1 ? malformed : []),
          {
            server: {
              $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
              name: version.name,
              description: version.description,
              ...(version.title === undefined ? {} : { title: version.title }),
              version: version.version,
              ...(version.remotes === undefined ? {} : { remotes: version.remotes }),
            },
            _meta: {
              [OFFICIAL]: {
                status: version.status,
                publishedAt: '2025-10-01T00:00:00Z',
                updatedAt: version.updatedAt,
                isLatest: version.isLatest,
              },
            },
          },
        ]),
        metadata: { count: page.length, ...(nextCursor === undefined ? {} : { nextCursor }) },
      }),
    );
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const stamp = (minute: number): string => new Date(Date.UTC(2025, 10, 1, 0, minute)).toISOString();

function servers(count: number): Version[] {
  return Array.from({ length: count }, (_, index) => ({
    name: `io.example/server-${String(index).padStart(3, '0')}`,
    version: '1.0.0',
    description: `Weather tools number ${index}`,
    remotes: [{ type: 'streamable-http', url: `https://mcp.example/s${index}` }],
    status: 'active' as const,
    updatedAt: stamp(index),
    isLatest: true,
  }));
}

interface Entry {
  id: string;
  name: string;
  description: string;
  tags: string[];
  endpoints: { type: string; url: string }[];
  provenance: Provenance;
}

describe('importing from an MCP Registry (GET /v0.1/servers, incremental)', () => {
  const upstream = new FakeMcpRegistry();
  let registry: TestRegistry;

  const entries = async (): Promise<Entry[]> => {
    const all: Entry[] = [];
    let after: string | null = null;
    do {
      const query: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
      const response = await registry.app.inject({
        method: 'GET',
        url: `/api/federation/entries?limit=200${query}`,
      });
      const page = response.json<{ entries: Entry[]; next_after: string | null }>();
      all.push(...page.entries);
      after = page.next_after;
    } while (after !== null);
    return all;
  };
  const status = async (): Promise<SourceStatus> => {
    return (await federationSources(registry))[0] as SourceStatus;
  };

  /**
   * Checks the updated_since a round asked with: the newest updatedAt the round before read, less
   * that round's length (its status, last attempt to last success, read before the next round) and a
   * minute, to within the instants the registry measured it between.
   */
  const sinceFrom = async (newest: string): Promise<(asked: string | null | undefined) => void> => {
    const [source] = (await federationSources(registry)) as {
      last_attempt_at: number;
      last_success_at: number;
    }[];
    assert.ok(source !== undefined);
    const latest = Date.parse(newest) - 60_000;
    const earliest = latest - (source.last_success_at - source.last_attempt_at);
    return (asked) => {
      const at = Date.parse(asked ?? '');
      assert.ok(
        at >= earliest && at <= latest,
        `${asked} within ${new Date(earliest).toISOString()}..${new Date(latest).toISOString()}`,
      );
    };
  };

  before(async () => {
    await upstream.start();
    upstream.versions = servers(250);
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_MCP_REGISTRIES: upstream.base,
      FEDERATION_MAX_RESPONSE_KB: '48',
      FEDERATION_FETCH_TIMEOUT_SECONDS: '1',
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await upstream.close();
  });

  test('the first read pages through every server; remotes become endpoints, capabilities stay unknown', async () => {
    const all = await entries();
    assert.equal(all.length, 250);
    const first = all.find((entry) => entry.id === `mcp:${upstream.base}#io.example/server-000`);
    assert.ok(first);
    assert.equal(first.description, 'Weather tools number 0');
    assert.deepEqual(first.endpoints, [{ type: 'mcp', url: 'https://mcp.example/s0' }]);
    assert.equal(first.provenance.format, 'mcp-registry');
    assert.equal(first.provenance.verification, 'unsigned');
    assert.equal(first.provenance.home_registry, upstream.base);
    const current = await status();
    assert.deepEqual([current.state, current.entries], ['ok', 250]);
    const search = await registry.app.inject({
      method: 'GET',
      url: '/api/agents/search?scope=federated&q=weather&limit=1',
    });
    assert.equal(search.json().total, 250);
  });

  test('later reads ask only for changes: a new latest version replaces, a deleted one is purged', async () => {
    upstream.requests.length = 0;
    upstream.versions[0] = { ...upstream.versions[0]!, isLatest: false, updatedAt: stamp(300) };
    upstream.versions.push({
      ...upstream.versions[0]!,
      version: '2.0.0',
      title: 'Weather Two',
      description: 'Weather tools, second edition',
      isLatest: true,
      updatedAt: stamp(301),
    });
    upstream.versions[1] = { ...upstream.versions[1]!, status: 'deleted', updatedAt: stamp(302) };
    const askedAfterFirstRound = await sinceFrom(stamp(249));
    await registry.ctx.federation.refresh();
    assert.ok(upstream.requests.length > 0);
    const asked = upstream.requests[0]?.searchParams.get('updated_since');
    askedAfterFirstRound(asked);
    for (const request of upstream.requests) assert.equal(request.searchParams.get('updated_since'), asked);
    const all = await entries();
    assert.equal(all.length, 249);
    const replaced = all.find((entry) => entry.id === `mcp:${upstream.base}#io.example/server-000`);
    assert.equal(replaced?.name, 'Weather Two');
    assert.ok(!all.some((entry) => entry.id === `mcp:${upstream.base}#io.example/server-001`));
    const askedNext = await sinceFrom(stamp(302));
    upstream.requests.length = 0;
    await registry.ctx.federation.refresh();
    askedNext(upstream.requests[0]?.searchParams.get('updated_since'));
  });

  test('a server changed during a round, on a page already read, is read by the next round', async () => {
    // Every server changed since the last round: this round reads three pages.
    upstream.versions = upstream.versions.map((version, i) => ({
      ...version,
      updatedAt: stamp(400 + (i % 10)),
    }));
    const changedAt = Date.parse(stamp(420));
    const server = (index: number): string => `io.example/server-${String(index).padStart(3, '0')}`;
    const at = (index: number): number =>
      upstream.versions.findIndex((version) => version.name === server(index));
    upstream.onRequest = (url) => {
      if (url.searchParams.get('cursor') !== '100') return;
      upstream.onRequest = undefined;
      // While page 2 is read: a server of page 1 changes, then one of page 3, a little later.
      upstream.versions[at(5)] = {
        ...upstream.versions[at(5)]!,
        description: 'Changed while the round read page 2',
        updatedAt: new Date(changedAt).toISOString(),
      };
      upstream.versions[at(240)] = {
        ...upstream.versions[at(240)]!,
        description: 'Changed a little later',
        updatedAt: new Date(changedAt + 30_000).toISOString(),
      };
    };
    const description = async (index: number): Promise<string | undefined> =>
      (await entries()).find((entry) => entry.id === `mcp:${upstream.base}#${server(index)}`)?.description;
    await registry.ctx.federation.refresh();
    assert.equal(upstream.onRequest, undefined, 'the round read page 2');
    assert.equal(await description(240), 'Changed a little later');
    assert.equal(await description(5), 'Weather tools number 5');
    await registry.ctx.federation.refresh();
    assert.equal(await description(5), 'Changed while the round read page 2');
  });

  for (const [mode, reason] of [
    ['garbage', /did not answer JSON: refused/],
    ['loop', /cursor loop/],
    ['huge', /more than 48 KB/],
    ['drip', /did not answer in full within 1000 ms/],
    ['long-cursor', /metadata\.nextCursor has 2004 characters, more than 1024: refused/],
    ['overfull', /answered 101 servers to a request for at most 100: refused/],
  ] as const) {
    test(`a registry answering ${mode} is refused with the reason on the status; callers are unaffected`, async () => {
      const before = (await entries()).length;
      upstream.mode = mode;
      if (mode === 'loop')
        upstream.versions.push(...servers(3).map((version) => ({ ...version, updatedAt: stamp(400) })));
      try {
        await registry.ctx.federation.refresh();
      } finally {
        upstream.mode = 'normal';
      }
      const current = await status();
      assert.equal(current.state, 'error');
      assert.match(current.last_error ?? '', reason);
      assert.equal((await entries()).length >= before, true, 'entries are kept as last read');
      const search = await registry.app.inject({
        method: 'GET',
        url: '/api/agents/search?scope=federated&q=weather',
      });
      assert.equal(search.statusCode, 200);
      // The next good round recovers.
      await registry.ctx.federation.refresh();
      assert.equal((await status()).state, 'ok');
    });
  }
});

describe('one bad server never stops the servers after it; imported text is stored alike on both databases', () => {
  const upstream = new FakeMcpRegistry();
  let registry: TestRegistry;

  before(async () => {
    await upstream.start();
    const [first, nulDescription, nulName, surrogate, last] = servers(5);
    upstream.versions = [
      first!,
      {
        ...nulDescription!,
        title: 'Weather\tTwo\nlines',
        description: 'Weather\u0000tools with a NUL\u0007',
      },
      { ...nulName!, name: 'io.example/nul\u0000name' },
      { ...surrogate!, description: 'Weather tools \ud800alone' },
      last!,
    ];
    upstream.mode = 'one-malformed';
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_MCP_REGISTRIES: upstream.base,
    });
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await upstream.close();
  });

  test('a NUL or a lone surrogate in a description is cleaned, and the servers after it are imported', async () => {
    const response = await registry.app.inject({ method: 'GET', url: '/api/federation/entries?limit=200' });
    const listed = response.json<{ entries: Entry[] }>().entries;
    const byName = new Map(listed.map((entry) => [entry.id.split('#')[1], entry]));
    assert.deepEqual([...byName.keys()].sort(), [
      'io.example/server-000',
      'io.example/server-001',
      'io.example/server-003',
      'io.example/server-004',
    ]);
    assert.equal(byName.get('io.example/server-001')?.description, 'Weathertools with a NUL');
    assert.equal(byName.get('io.example/server-001')?.name, 'Weather Two lines');
    assert.equal(byName.get('io.example/server-003')?.description, 'Weather tools \ufffdalone');
  });

  test('a server with a NUL in its name, or not the documented shape, is skipped with the reason on the status', async () => {
    const [source] = await federationSources(registry);
    assert.equal(source?.state, 'ok');
    assert.equal(source?.entries, 4);
    assert.match(
      source?.last_error ?? '',
      /^the round of \S+ skipped 2 server\(s\), the others were imported/,
    );
    assert.match(source?.last_error ?? '', /servers\[1\] lacks server.name, description or version/);
    assert.match(source?.last_error ?? '', /"io.example\/nul\\u0000name" has a control character/);
  });

  test('the note stays, dated, while later rounds skip nothing (a skipped server is read again only once it changes)', async () => {
    upstream.mode = 'normal';
    await registry.ctx.federation.refresh();
    const [source] = await federationSources(registry);
    assert.deepEqual([source?.state, source?.entries], ['ok', 4]);
    assert.match(source?.last_error ?? '', /skipped 2 server\(s\)/);
  });
});

describe('an MCP Registry that names new servers every round', () => {
  const upstream = new FakeMcpRegistry();
  let registry: TestRegistry;
  const status = async (): Promise<SourceStatus> => (await federationSources(registry))[0] as SourceStatus;
  const listed = async (): Promise<string[]> =>
    (await registry.app.inject({ method: 'GET', url: '/api/federation/entries?limit=200' }))
      .json<{ entries: Entry[] }>()
      .entries.map((entry) => entry.id);
  /** Round `round`'s servers: `count` names never seen before, each stamped after the last round. */
  const fresh = (round: number, count: number): Version[] =>
    servers(count).map((version, index) => ({
      ...version,
      name: `io.flood/round-${round}-${index}`,
      updatedAt: stamp(round * 20 + index),
    }));
  /** One round in which the registry lists only `round`'s servers: the earlier ones dropped, never tombstoned. */
  const round = async (number: number, count: number): Promise<SourceStatus> => {
    upstream.versions = fresh(number, count);
    await registry.ctx.federation.refresh();
    return status();
  };

  before(async () => {
    await upstream.start();
    registry = await startRegistry({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      METRICS_TOKEN: OPERATOR_TOKEN,
      FEDERATION_MCP_REGISTRIES: upstream.base,
      FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY: '25',
      FEDERATION_EXPIRE_AFTER_ROUNDS: '3',
    });
    // The start's own round and this one read the empty registry: the next round is the first full read.
    await registry.ctx.federation.refresh();
  });
  after(async () => {
    await registry.close();
    await upstream.close();
  });

  test('stops at FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY, with the reason on the source status', async () => {
    assert.equal((await round(1, 10)).entries, 10);
    assert.equal((await round(2, 10)).entries, 20);
    const capped = await round(3, 10);
    assert.equal(capped.state, 'ok');
    assert.equal(capped.entries, 25);
    assert.match(
      capped.last_error ?? '',
      /5 servers refused: this registry's source holds FEDERATION_MAX_ENTRIES_PER_MCP_REGISTRY \(25\) entries/,
    );
  });

  test('what the registry stopped listing goes after FEDERATION_EXPIRE_AFTER_ROUNDS rounds', async () => {
    // Every third round reads the registry in full: the 25 servers of rounds 1 to 3, unlisted now, go.
    const current = await round(4, 10);
    assert.equal(current.entries, 10);
    assert.match(current.last_error ?? '', /25 entries no longer listed by the full read were removed/);
    const ids = await listed();
    assert.ok(
      ids.every((id) => id.includes('#io.flood/round-4-')),
      ids.join(', '),
    );
  });
});
