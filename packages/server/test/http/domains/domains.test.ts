import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';
import { followedEvents, postKeys, recoverySetBody, recoveryStartBody } from '../../support/key-rotation.js';
import {
  agentPath,
  bearer,
  ed25519Agent,
  startTxtServer,
  startWellKnownServer,
} from '@agent-registry/testkit';

const RECHECK_SECONDS = 3600;

describe('domains: claims proven over HTTP and DNS, re-checked, searched, in the log', () => {
  let registry: TestRegistry;
  let web: Awaited<ReturnType<typeof startWellKnownServer>>;
  let dns: Awaited<ReturnType<typeof startTxtServer>>;

  before(async () => {
    web = await startWellKnownServer();
    dns = await startTxtServer();
    registry = await startRegistry(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        DOMAIN_PROOF_ALLOW_HTTP: 'true',
        DOMAIN_DNS_SERVERS: dns.address,
        DOMAIN_RECHECK_SECONDS: String(RECHECK_SECONDS),
      },
      {
        // Every *.test name is this machine: the well-known server, or nothing listening (port 80).
        resolveHost: async (host) => (host.endsWith('.test') ? ['127.0.0.1'] : []),
        manualDomainChecks: true,
      },
    );
  });
  after(async () => {
    await registry.close();
    await web.close();
    await dns.close();
  });

  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const claim = (did: string, token: string, domain: string) =>
    registry.app.inject({
      method: 'POST',
      url: agentPath(did, '/domains'),
      headers: bearer(token),
      payload: { domain },
    });
  const profileOf = async (did: string) =>
    (await get(agentPath(did))).json<{ domains?: string[]; handle?: string }>();
  /** Two re-check rounds, each a recheck interval later: a proof missing at both drops the claim. */
  const recheckTwice = async () => {
    const dropped: number[] = [];
    for (let round = 0; round < 2; round += 1) {
      registry.clock.advance(RECHECK_SECONDS * 1000);
      dropped.push(await registry.ctx.domains.recheckDue());
    }
    return dropped;
  };

  test('a domain proven by its well-known document shows on the profile and in domain= searches, and goes when the proof does', async () => {
    const agent = await registerNamed(registry, 'Alpha Translator');
    const other = await registerNamed(registry, 'Alpha Bystander');
    const domain = `alpha.test:${web.port}`;

    const missing = await claim(agent.did, agent.token, domain);
    assert.equal(missing.statusCode, 422, missing.body);
    assert.equal(missing.json<{ code: string }>().code, 'DOMAIN_PROOF_NOT_FOUND');
    assert.match(missing.json<{ details: string }>().details, /agent-registry\.json answered 404/);

    web.documents.set(domain, { agents: ['did:web:elsewhere.test:agent:1', agent.did] });
    const claimed = await claim(agent.did, agent.token, domain.toUpperCase());
    assert.equal(claimed.statusCode, 200, claimed.body);
    const state = claimed.json<{ domains: { domain: string; method: string }[]; handle: null }>();
    assert.deepEqual(
      state.domains.map(({ domain, method }) => ({ domain, method })),
      [{ domain, method: 'https' }],
    );
    assert.deepEqual((await profileOf(agent.did)).domains, [domain]);
    assert.equal((await profileOf(other.did)).domains, undefined);
    const listed = (await get(agentPath(agent.did, '/domains'))).json<{ domains: unknown[] }>();
    assert.equal(listed.domains.length, 1);

    const search = await get(`/api/agents/search?q=alpha&domain=${encodeURIComponent(domain)}`);
    assert.equal(search.statusCode, 200, search.body);
    const found = search.json<{ agents: { did: string; domains?: string[] }[]; total: number }>();
    assert.deepEqual(
      found.agents.map((hit) => hit.did),
      [agent.did],
    );
    assert.equal(found.total, 1);
    assert.deepEqual(found.agents[0]?.domains, [domain]);
    // The web search lists the domain on the agent's card and filters by it too.
    const webSearch = await registry.app.inject({
      method: 'GET',
      url: `/?q=alpha&domain=${encodeURIComponent(domain)}`,
      headers: { accept: 'text/html' },
    });
    assert.equal(webSearch.statusCode, 200);
    assert.ok(webSearch.body.includes(`Verified domains: ${domain}`));
    assert.ok(!webSearch.body.includes('Alpha Bystander'));
    const none = (await get('/api/agents/search?q=alpha&domain=nobody.test')).json<{ total: number }>();
    assert.equal(none.total, 0);
    const mixed = await get(`/api/agents/search?domain=${encodeURIComponent(domain)}&available=true`);
    assert.equal(mixed.statusCode, 400);

    // The proof is withdrawn: one missed check keeps the claim, the second drops it.
    web.documents.delete(domain);
    registry.clock.advance(RECHECK_SECONDS * 1000);
    assert.equal(await registry.ctx.domains.recheckDue(), 0);
    assert.deepEqual((await profileOf(agent.did)).domains, [domain]);
    registry.clock.advance(RECHECK_SECONDS * 1000);
    assert.equal(await registry.ctx.domains.recheckDue(), 1);
    assert.equal((await profileOf(agent.did)).domains, undefined);
    const after = (await get(`/api/agents/search?domain=${encodeURIComponent(domain)}`)).json<{
      total: number;
    }>();
    assert.equal(after.total, 0);

    const events = (await followedEvents(registry)).filter((leaf) => leaf.subject === agent.did);
    assert.deepEqual(
      events.map((leaf) => [leaf.op, leaf.domain, leaf.method ?? leaf.reason]),
      [
        ['domain.claimed', domain, 'https'],
        ['domain.dropped', domain, 'proof_gone'],
      ],
    );
  });

  test('a domain proven by a DNS TXT record, kept while the record stays, dropped when it goes', async () => {
    const agent = await registerNamed(registry, 'Beta Scribe');
    const domain = 'beta.test';
    dns.records.set('_agent-registry.beta.test', ['v=unrelated', `did=${agent.did}`]);
    const claimed = await claim(agent.did, agent.token, domain);
    assert.equal(claimed.statusCode, 200, claimed.body);
    assert.equal(claimed.json<{ domains: { method: string }[] }>().domains[0]?.method, 'dns');
    assert.deepEqual((await profileOf(agent.did)).domains, [domain]);

    assert.deepEqual(await recheckTwice(), [0, 0]);
    assert.deepEqual((await profileOf(agent.did)).domains, [domain]);

    dns.records.set('_agent-registry.beta.test', ['did=did:web:someone.else']);
    assert.deepEqual(await recheckTwice(), [0, 1]);
    assert.equal((await profileOf(agent.did)).domains, undefined);
    const leaves = (await followedEvents(registry)).filter((leaf) => leaf.subject === agent.did);
    assert.deepEqual(
      leaves.map((leaf) => leaf.op),
      ['domain.claimed', 'domain.dropped'],
    );
  });

  test('claims are refused clearly: bad names, IP addresses, another agent, no token', async () => {
    const agent = await registerNamed(registry, 'Gamma Guard');
    const other = await registerNamed(registry, 'Gamma Other');
    for (const [domain, code] of [
      ['https://gamma.test/', 'INVALID_DOMAIN'],
      ['127.0.0.1', 'INVALID_DOMAIN'],
      ['localhost', 'INVALID_DOMAIN'],
      ['bad_label.test', 'INVALID_DOMAIN'],
      [`${'a'.repeat(64)}.test`, 'INVALID_DOMAIN'],
    ] as const) {
      const refused = await claim(agent.did, agent.token, domain);
      assert.equal(refused.statusCode, 400, `${domain}: ${refused.body}`);
      assert.equal(refused.json<{ code: string }>().code, code, domain);
    }
    const notOwner = await claim(agent.did, other.token, 'gamma.test');
    assert.equal(notOwner.statusCode, 403);
    const anonymous = await registry.app.inject({
      method: 'POST',
      url: agentPath(agent.did, '/domains'),
      payload: { domain: 'gamma.test' },
    });
    assert.equal(anonymous.statusCode, 401);
    const notClaimed = await registry.app.inject({
      method: 'DELETE',
      url: agentPath(agent.did, '/domains/gamma.test'),
      headers: bearer(agent.token),
    });
    assert.equal(notClaimed.statusCode, 404);
    assert.equal(notClaimed.json<{ code: string }>().code, 'DOMAIN_NOT_CLAIMED');
  });

  test('a handle under a verified domain resolves, is unique, and goes with its domain', async () => {
    const agent = await registerNamed(registry, 'Delta Translator');
    const rival = await registerNamed(registry, 'Delta Rival');
    const domain = `delta.test:${web.port}`;
    web.documents.set(domain, { agents: [agent.did, rival.did] });
    assert.equal((await claim(agent.did, agent.token, domain)).statusCode, 200);
    assert.equal((await claim(rival.did, rival.token, domain)).statusCode, 200);
    const setHandle = (did: string, token: string, handle: string) =>
      registry.app.inject({
        method: 'PUT',
        url: agentPath(did, '/handle'),
        headers: bearer(token),
        payload: { handle },
      });

    const unverified = await setHandle(agent.did, agent.token, 'com.example/translator');
    assert.equal(unverified.statusCode, 409, unverified.body);
    assert.equal(unverified.json<{ code: string }>().code, 'HANDLE_DOMAIN_NOT_VERIFIED');
    const malformed = await setHandle(agent.did, agent.token, 'test.delta/Not Valid');
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json<{ code: string }>().code, 'INVALID_HANDLE');

    const taken = await setHandle(agent.did, agent.token, 'test.delta/translator');
    assert.equal(taken.statusCode, 200, taken.body);
    assert.equal(taken.json<{ handle: string }>().handle, 'test.delta/translator');
    const byHandle = await get('/api/agents/by-handle?handle=test.delta/translator');
    assert.equal(byHandle.statusCode, 200, byHandle.body);
    const profile = byHandle.json<{ did: string; handle: string; domains: string[] }>();
    assert.equal(profile.did, agent.did);
    assert.equal(profile.handle, 'test.delta/translator');
    assert.deepEqual(profile.domains, [domain]);

    // The A2A card carries them in an extension of its own; MCP's get_agent is the profile.
    const card = (await get(`/a2a/${encodeURIComponent(agent.did)}/.well-known/agent-card.json`)).json<{
      capabilities: { extensions: { uri: string; params: unknown }[] };
    }>();
    assert.deepEqual(
      card.capabilities.extensions.find((extension) => extension.uri === 'urn:agent-registry:a2a:identity:v1')
        ?.params,
      { domains: [domain], handle: 'test.delta/translator' },
    );

    // ARD entries name the verified domains in their catalog metadata.
    const ard = await registry.app.inject({
      method: 'POST',
      url: '/ard/search',
      payload: { query: { text: 'Delta Translator' } },
    });
    assert.equal(ard.statusCode, 200, ard.body);
    const results = ard.json<{ results: { metadata: { did: string; verifiedDomains?: string } }[] }>()
      .results;
    assert.equal(
      results.find((result) => result.metadata.did === agent.did)?.metadata.verifiedDomains,
      domain,
    );

    // MCP's get_agent takes the handle for the DID.
    const mcp = await registry.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { accept: 'application/json, text/event-stream' },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_agent', arguments: { did: 'test.delta/translator' } },
      },
    });
    assert.equal(mcp.statusCode, 200, mcp.body);
    // A JSON answer, or one server-sent event carrying it.
    const message = mcp.body.startsWith('{') ? mcp.body : (/^data: (.*)$/m.exec(mcp.body)?.[1] ?? '');
    const called = JSON.parse(message) as {
      result: { structuredContent: { did: string; handle: string } };
    };
    assert.equal(called.result.structuredContent.did, agent.did);
    assert.equal(called.result.structuredContent.handle, 'test.delta/translator');

    // The web page lives at a readable URL and shows the handle and the domain.
    const page = await registry.app.inject({
      method: 'GET',
      url: '/agents/test.delta/translator',
      headers: { accept: 'text/html' },
    });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dt>Handle<\/dt>\s*<dd><code class="handle">test\.delta\/translator<\/code>/);
    assert.ok(page.body.includes(`<li><code>${domain}</code></li>`));
    assert.ok(page.body.includes(agent.did));
    const unknownPage = await registry.app.inject({
      method: 'GET',
      url: '/agents/test.delta/nobody',
      headers: { accept: 'text/html' },
    });
    assert.equal(unknownPage.statusCode, 404);

    const clash = await setHandle(rival.did, rival.token, 'test.delta/translator');
    assert.equal(clash.statusCode, 409);
    assert.equal(clash.json<{ code: string }>().code, 'HANDLE_TAKEN');
    assert.equal((await get('/api/agents/by-handle?handle=test.delta/nobody')).statusCode, 404);

    // Taking another handle frees the first.
    const renamed = await setHandle(agent.did, agent.token, 'TEST.DELTA/interpreter');
    assert.equal(renamed.json<{ handle: string }>().handle, 'test.delta/interpreter');
    assert.equal((await setHandle(rival.did, rival.token, 'test.delta/translator')).statusCode, 200);
    assert.equal(
      (await get('/api/agents/by-handle?handle=test.delta/translator')).json<{ did: string }>().did,
      rival.did,
    );

    // Dropping the domain takes the handle with it.
    const dropped = await registry.app.inject({
      method: 'DELETE',
      url: agentPath(agent.did, `/domains/${encodeURIComponent(domain)}`),
      headers: bearer(agent.token),
    });
    assert.equal(dropped.statusCode, 200, dropped.body);
    assert.equal(dropped.json<{ handle: string | null }>().handle, null);
    assert.equal((await get('/api/agents/by-handle?handle=test.delta/interpreter')).statusCode, 404);
    assert.equal((await profileOf(agent.did)).handle, undefined);

    const leaves = (await followedEvents(registry)).filter((leaf) => leaf.subject === agent.did);
    assert.deepEqual(
      leaves.map((leaf) => [
        leaf.op,
        leaf.op === 'handle.changed'
          ? `${String(leaf.previous_handle)} -> ${String(leaf.handle)}`
          : (leaf.reason ?? leaf.method),
      ]),
      [
        ['domain.claimed', 'https'],
        ['handle.changed', 'null -> test.delta/translator'],
        ['handle.changed', 'test.delta/translator -> test.delta/interpreter'],
        ['handle.changed', 'test.delta/interpreter -> null'],
        ['domain.dropped', 'dropped'],
      ],
    );
  });

  test('the web page shows a pending key recovery', async () => {
    const agent = await registerNamed(registry, 'Epsilon Recovering');
    const recovery = ed25519Agent();
    const next = ed25519Agent();
    const set = await postKeys(
      registry,
      agent.did,
      'recovery',
      await recoverySetBody(agent.did, agent.agent, recovery, registry.clock.now()),
    );
    assert.equal(set.statusCode, 200, set.body);
    const plain = await registry.app.inject({
      method: 'GET',
      url: `/agents/${agent.did}`,
      headers: { accept: 'text/html' },
    });
    assert.ok(!plain.body.includes('Key recovery'));
    const started = await postKeys(
      registry,
      agent.did,
      'recovery/start',
      await recoveryStartBody(agent.did, recovery, next, registry.clock.now()),
    );
    assert.equal(started.statusCode, 200, started.body);
    const page = await registry.app.inject({
      method: 'GET',
      url: `/agents/${agent.did}`,
      headers: { accept: 'text/html' },
    });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dt>Key recovery<\/dt>/);
    assert.ok(page.body.includes(next.publicKey));
  });
});
