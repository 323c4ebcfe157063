import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startTxtServer } from '@agent-registry/testkit';
import {
  ok,
  parseJson,
  runCli,
  startRegistry,
  tempHome,
  type Json,
  type RunningRegistry,
} from './harness.js';

describe('domain and handle commands against a real registry', () => {
  let registry: RunningRegistry;
  let dns: Awaited<ReturnType<typeof startTxtServer>>;
  const agent = tempHome();
  const run = (...args: string[]) => runCli(args, { home: agent, env: { AGENT_REGISTRY_URL: registry.url } });

  before(async () => {
    dns = await startTxtServer();
    // cli-domain.test has no web server; the TXT record on the test's DNS server proves it.
    registry = await startRegistry({ DOMAIN_DNS_SERVERS: dns.address, DOMAIN_PROOF_ALLOW_HTTP: 'true' });
    ok(await run('init', '--name', 'Domain Holder', '--capability', 'general'));
    ok(await run('register'));
  });
  after(async () => {
    await registry.close();
    await dns.close();
    fs.rmSync(agent, { recursive: true, force: true });
  });

  it('claims a domain, takes a handle, and other commands accept the handle for the DID', async () => {
    const did = String(parseJson<Json>(ok(await run('whoami', '--json'))).did);
    const refused = await run('domain', 'claim', 'cli-domain.test', '--json');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr + refused.stdout, /DOMAIN_PROOF_NOT_FOUND/);

    dns.records.set('_agent-registry.cli-domain.test', [`did=${did}`]);
    const claimed = parseJson<{ domains: { domain: string; method: string }[] }>(
      ok(await run('domain', 'claim', 'cli-domain.test', '--json')),
    );
    assert.deepEqual(
      claimed.domains.map((claim) => claim.method),
      ['dns'],
    );
    ok(await run('domain', 'check', 'cli-domain.test'));

    const named = parseJson<{ handle: string }>(
      ok(await run('handle', 'set', 'test.cli-domain/holder', '--json')),
    );
    assert.equal(named.handle, 'test.cli-domain/holder');
    const shown = parseJson<{ did: string; handle: string }>(
      ok(await run('show', 'test.cli-domain/holder', '--json')),
    );
    assert.equal(shown.did, did);
    assert.equal(shown.handle, 'test.cli-domain/holder');
    const listed = parseJson<{ did: string }>(
      ok(await run('domain', 'list', 'test.cli-domain/holder', '--json')),
    );
    assert.equal(listed.did, did);
    ok(await run('reviews', 'test.cli-domain/holder'));

    const dropped = parseJson<{ domains: unknown[]; handle: null }>(
      ok(await run('domain', 'drop', 'cli-domain.test', '--json')),
    );
    assert.deepEqual(dropped.domains, []);
    assert.equal(dropped.handle, null);
    const gone = await run('show', 'test.cli-domain/holder');
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /HANDLE_NOT_FOUND|no agent has the handle/);
  });
});
