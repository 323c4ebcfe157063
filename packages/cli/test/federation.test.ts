import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FederationSourceStatus as SourceStatus, SearchHit, SearchResponse } from '@agent-registry/sdk';
import {
  createTestDatabase,
  startRegistryImportingCards,
  startRegistryProcess,
  testDatabase,
  type AgentCardHost,
} from '@agent-registry/testkit';
import { observedText, whereItLives } from '../src/commands/discover.js';
import { ok, parseJson, runCli, tempHome, type ErrorOutput } from './harness.js';

/** A peer registry's log as far as a follower reads it: its verifier key and its checkpoint. */
function peerLog(name: string): { verifierKey: string; emptyCheckpoint: string } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const keyBytes = Buffer.concat([Buffer.of(1), raw]);
  const keyId = crypto.createHash('sha256').update(`${name}\n`).update(keyBytes).digest().subarray(0, 4);
  const text = `${name}\n0\n${crypto.createHash('sha256').digest('base64')}\n`;
  const signature = crypto.sign(null, Buffer.from(text), privateKey);
  return {
    verifierKey: `${name}+${keyId.toString('hex')}+${keyBytes.toString('base64')}`,
    emptyCheckpoint: `${text}\n\u2014 ${name} ${Buffer.concat([keyId, signature]).toString('base64')}\n`,
  };
}

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe(`agent-registry federation against a real registry (${testDatabase})`, () => {
  const home = tempHome();
  /** The forking peer's log, named as a peer's log must be: its own host, then /log. */
  let log: ReturnType<typeof peerLog>;
  let logName: string;
  /** The forking peer serves a checkpoint that is no signed note until it is mended. */
  let mended = false;
  let forking: { server: http.Server; url: string };
  let failing: { server: http.Server; url: string };
  let registry: Awaited<ReturnType<typeof startRegistryProcess>>;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
    runCli([...args, '--registry', registry.url], {
      home,
      env: { METRICS_TOKEN: undefined, FEDERATION_ADMIN_TOKEN: undefined, ...env },
    });
  const status = async (): Promise<SourceStatus[]> =>
    parseJson<{ sources: SourceStatus[] }>(
      ok(await cli(['federation', 'status', '--json'], { METRICS_TOKEN: 'metrics-secret-0123456789' })),
    ).sources;

  before(async () => {
    forking = await listen((request, response) => {
      if (request.url === '/log/verifier-key') response.end(log.verifierKey);
      else if (request.url === '/log/checkpoint')
        response.end(mended ? log.emptyCheckpoint : 'not a signed note');
      else response.writeHead(404).end();
    });
    logName = `${new URL(forking.url).host}/log`;
    log = peerLog(logName);
    failing = await listen((_request, response) => response.writeHead(503).end('down for maintenance'));
    database = await createTestDatabase();
    registry = await startRegistryProcess({
      DATABASE_URL: database.url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      FEDERATION_PEERS: `${forking.url},${failing.url}`,
      METRICS_TOKEN: 'metrics-secret-0123456789',
      FEDERATION_ADMIN_TOKEN: 'admin-secret-0123456789',
    });
    // The first round runs soon after start: wait until both peers were tried.
    for (let tries = 0; ; tries += 1) {
      const sources = await status();
      if (sources.length === 2 && sources.every((source) => source.state !== 'ok')) break;
      assert.ok(tries < 100, `the peers were not tried: ${JSON.stringify(sources)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    await registry?.stop();
    await database?.drop();
    forking?.server.close();
    failing?.server.close();
  });

  test('status shows each peer with its state and the reason it stopped or failed', async () => {
    const sources = await status();
    const stopped = sources.find((source) => source.url === forking.url);
    const failed = sources.find((source) => source.url === failing.url);
    assert.equal(stopped?.state, 'stopped');
    assert.match(stopped?.last_error ?? '', /^no longer followed: the checkpoint has no signature/);
    assert.equal(failed?.state, 'error');
    assert.match(failed?.last_error ?? '', /answered 503/);
    assert.equal(failed?.checkpoint, undefined);

    const text = ok(
      await cli(['federation', 'status'], { METRICS_TOKEN: 'metrics-secret-0123456789' }),
    ).stdout;
    assert.match(text, new RegExp(`peer ${forking.url}: stopped`));
    assert.match(text, /last error: +no longer followed: the checkpoint has no signature/);
    assert.match(text, new RegExp(`peer ${failing.url}: error`));
    assert.match(text, /last error: +.*answered 503/);
    assert.match(text, /checkpoint: +none verified yet/);
    // The token from the option works as the one from the environment.
    ok(await cli(['federation', 'status', '--metrics-token', 'metrics-secret-0123456789']));
  });

  test('without a token, status is the public summary without error texts; a wrong token is refused with exit 4', async () => {
    const summary = ok(await cli(['federation', 'status']));
    assert.match(summary.stdout, new RegExp(`peer ${forking.url}: stopped`));
    assert.doesNotMatch(summary.stdout, /last error|no longer followed|answered 503/);
    assert.match(
      summary.stdout,
      /the public summary: the sources' error texts are shown with the registry's METRICS_TOKEN/,
    );
    const json = parseJson<{ view: string; sources: SourceStatus[] }>(
      ok(await cli(['federation', 'status', '--json'])),
    );
    assert.equal(json.view, 'public');
    assert.ok(json.sources.every((source) => !('last_error' in source)));
    const wrong = await cli(['federation', 'status', '--json'], { METRICS_TOKEN: 'guess' });
    assert.equal(wrong.code, 4);
    const body = parseJson<ErrorOutput>(wrong).error;
    assert.equal(body.code, 'INVALID_METRICS_TOKEN');
    assert.match(body.message, /the token given \(--metrics-token or METRICS_TOKEN\) was not accepted/);

    const noAdmin = await cli(['federation', 'resume', forking.url]);
    assert.equal(noAdmin.code, 2);
    assert.match(noAdmin.stderr, /pass --admin-token or set FEDERATION_ADMIN_TOKEN/);
    // The metrics token does not resume a peer.
    const wrongAdmin = await cli([
      'federation',
      'resume',
      forking.url,
      '--admin-token',
      'metrics-secret-0123456789',
    ]);
    assert.equal(wrongAdmin.code, 4);
    assert.match(
      wrongAdmin.stderr,
      /needs Authorization: Bearer <FEDERATION_ADMIN_TOKEN>.*the token given \(--admin-token or FEDERATION_ADMIN_TOKEN\) was not accepted/,
    );
    assert.equal((await status()).find((source) => source.url === forking.url)?.state, 'stopped');
  });

  test('resume re-follows a stopped peer and records who; a peer that is not stopped or not followed is refused', async () => {
    const notStopped = await cli(['federation', 'resume', failing.url, '--json'], {
      FEDERATION_ADMIN_TOKEN: 'admin-secret-0123456789',
    });
    assert.equal(notStopped.code, 1);
    assert.equal(parseJson<ErrorOutput>(notStopped).error.code, 'PEER_NOT_STOPPED');
    const unknown = await cli(['federation', 'resume', 'https://elsewhere.example'], {
      FEDERATION_ADMIN_TOKEN: 'admin-secret-0123456789',
    });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /is not a peer this registry follows/);

    mended = true;
    const resumed = parseJson<SourceStatus>(
      ok(
        await cli(['federation', 'resume', forking.url, '--by', 'alice', '--json'], {
          FEDERATION_ADMIN_TOKEN: 'admin-secret-0123456789',
        }),
      ),
    );
    assert.equal(resumed.state, 'ok');
    assert.equal(resumed.last_error, null);
    assert.equal(resumed.resumed?.by, 'alice');
    assert.match(resumed.resumed?.reason ?? '', /the checkpoint has no signature/);
    assert.deepEqual(resumed.checkpoint, {
      origin: logName,
      size: 0,
      root_hash: crypto.createHash('sha256').digest('base64'),
    });
    const text = ok(
      await cli(['federation', 'status'], { METRICS_TOKEN: 'metrics-secret-0123456789' }),
    ).stdout;
    assert.match(text, new RegExp(`peer ${forking.url}: ok`));
    assert.match(text, /checkpoint: +size 0, root 47DEQpj8HBSa\+\/TImW\+5JCeuQeRkm5NMpJWZG3hSuFU= \(/);
    assert.ok(text.includes(`(${logName})`), text);
    assert.match(text, /resumed: +by alice at \d{4}-/);
  });
});

describe(`agent-registry search --federated against a registry holding a remote entry (${testDatabase})`, () => {
  const home = tempHome();
  let started: Awaited<ReturnType<typeof startRegistryImportingCards>>;
  let card: AgentCardHost;
  let localDid: string;
  const cli = (args: string[]) => runCli([...args, '--registry', started.registry.url], { home });

  before(async () => {
    started = await startRegistryImportingCards([
      { name: 'Remote Planner', description: 'Plans routes elsewhere', skill: 'route_planning' },
    ]);
    [card] = started.hosts as [AgentCardHost];
    ok(await cli(['init', '--name', 'Local Planner', '--capability', 'route_planning:Plans routes']));
    localDid = parseJson<{ did: string }>(ok(await cli(['register', '--json']))).did;
  });

  after(() => started?.close());

  test('without --federated only the agents registered here are listed, and no "lives at" column', async () => {
    const text = ok(await cli(['search', '--capability', 'route_planning'])).stdout;
    assert.match(text, /Local Planner/);
    assert.doesNotMatch(text, /Remote Planner/);
    assert.doesNotMatch(text, /LIVES AT/);
    const page = parseJson<SearchResponse>(
      ok(await cli(['search', '--capability', 'route_planning', '--json'])),
    );
    assert.deepEqual(
      page.agents.map((agent) => agent.did),
      [localDid],
    );
  });

  test('--federated lists the remote entry too, saying where each agent lives; --json is the API answer', async () => {
    const text = ok(await cli(['search', '--capability', 'route_planning', '--federated'])).stdout;
    const lines = text.split('\n');
    assert.match(lines[0] ?? '', /LIVES AT$/);
    const local = lines.find((line) => line.includes('Local Planner'));
    const remote = lines.find((line) => line.includes('Remote Planner'));
    assert.match(local ?? '', /\bhere\s*$/);
    assert.ok(
      remote?.trimEnd().endsWith(`${card.origin} (imported, unsigned)`),
      `the remote row names its home and provenance:\n${text}`,
    );
    assert.match(text, /1-2 of 2/);

    const page = parseJson<SearchResponse>(
      ok(await cli(['search', '--capability', 'route_planning', '--federated', '--json'])),
    );
    const hit = page.agents.find((agent) => agent.name === 'Remote Planner');
    assert.equal(hit?.home_registry, card.origin);
    assert.equal(hit?.provenance.kind, 'imported');
    assert.equal(hit?.provenance.source_url, card.cardUrl);
    assert.equal(page.total, 2);
    assert.equal('lives at' in (hit ?? {}), false, '--json adds nothing to the answer');
  });

  test('the federated table heads its first column for entry ids too, and show and invoke take an entry id', async () => {
    const text = ok(await cli(['search', '--capability', 'route_planning', '--federated'])).stdout;
    assert.match(text.split('\n')[0] ?? '', /^DID OR ENTRY ID /);
    const page = parseJson<SearchResponse>(
      ok(await cli(['search', '--capability', 'route_planning', '--federated', '--json'])),
    );
    const entryId = page.agents.find((agent) => agent.name === 'Remote Planner')?.did ?? '';
    assert.match(entryId, /^a2a:http/);
    assert.ok(text.includes(entryId), text);

    const shown = ok(await cli(['show', entryId])).stdout;
    assert.match(shown, new RegExp(`entry id: +${entryId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
    assert.match(shown, /name: +Remote Planner\n/);
    assert.ok(shown.includes(`lives at:    ${card.origin} (imported, unsigned)`), shown);
    assert.match(shown, /route_planning/);
    const json = parseJson<{ id: string; provenance: { kind: string } }>(
      ok(await cli(['show', entryId, '--json'])),
    );
    assert.deepEqual([json.id, json.provenance.kind], [entryId, 'imported']);

    const invoked = await cli(['invoke', entryId, 'route_planning', '--input', '{}']);
    assert.equal(invoked.code, 2, invoked.stderr);
    assert.match(invoked.stderr, /is a remote entry: it lives at another registry or host/);
    assert.doesNotMatch(invoked.stderr, /INVALID_DID/);
  });
});

test('a mirrored hit lives at its peer, with its state; an imported one with its verification', () => {
  const hit = (provenance: SearchHit['provenance']): SearchHit => ({
    did: 'did:web:peer.example:agent:1',
    name: 'Mirrored',
    description: null,
    capabilities: [],
    tags: [],
    reputation_score: 50,
    average_rating: 0,
    total_reviews: 0,
    created_at: 0,
    status: 'active',
    availability: { status: 'unknown', last_seen_at: null },
    home_registry: provenance.home_registry,
    provenance,
  });
  assert.equal(
    whereItLives(hit({ kind: 'mirrored', home_registry: 'https://peer.example', state: 'unverified' })),
    'https://peer.example (mirrored, unverified)',
  );
  assert.equal(
    whereItLives(hit({ kind: 'imported', home_registry: 'https://cards.example', verification: 'verified' })),
    'https://cards.example (imported, verified)',
  );
  assert.equal(whereItLives(hit({ kind: 'registered', home_registry: 'https://here.example' })), 'here');
});

test('the observed column: an imported entry its status and tools, a local agent its capabilities digest', () => {
  const digest = `sha256:${'ab12'.repeat(16)}`;
  const base: SearchHit = {
    did: 'mcp:https://registry.example#io.example/weather',
    name: 'Weather',
    description: null,
    capabilities: [],
    tags: [],
    reputation_score: 0,
    average_rating: 0,
    total_reviews: 0,
    created_at: 0,
    status: 'active',
    availability: { status: 'unknown', last_seen_at: null },
    home_registry: 'https://registry.example',
    provenance: { kind: 'imported', home_registry: 'https://registry.example', verification: 'unsigned' },
  };
  const observed = {
    status: 'answers' as const,
    checked_at: 2,
    last_answered_at: 2,
    first_seen_at: 1,
    tools_count: 3,
    tools_digest: digest,
    tools_changed_at: 1,
  };
  assert.equal(observedText(base), '-');
  assert.equal(observedText({ ...base, observed }), 'answers, 3 tools sha256:ab12ab12ab12…');
  assert.equal(
    observedText({
      ...base,
      observed: { ...observed, status: 'not_mcp', tools_count: null, tools_digest: null },
    }),
    'not_mcp',
  );
  assert.equal(observedText({ ...base, capabilities_digest: digest }), 'sha256:ab12ab12ab12…');
});
