import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, startTxtServer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { registerNamed } from '../../support/discovery-helpers.js';

/** Answers every request by path: a redirect, an oversized document, or the document `listing` names. */
async function hostileServer(listing: () => string[]) {
  const server = http.createServer((request, response) => {
    const host = request.headers.host ?? '';
    if (host.startsWith('redirect.')) {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    } else if (host.startsWith('huge.')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ agents: listing(), padding: 'x'.repeat(100 * 1024) }));
    } else {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ agents: listing() }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const loopback = { resolveHost: async () => ['127.0.0.1'], manualDomainChecks: true };

describe('domain claims under attack', () => {
  let listed: string[] = [];
  let web: Awaited<ReturnType<typeof hostileServer>>;
  let dns: Awaited<ReturnType<typeof startTxtServer>>;
  let publicOnly: TestRegistry;
  let registry: TestRegistry;

  before(async () => {
    web = await hostileServer(() => listed);
    dns = await startTxtServer();
    const common = { DOMAIN_PROOF_ALLOW_HTTP: 'true', DOMAIN_DNS_SERVERS: dns.address };
    publicOnly = await startRegistry(common, loopback);
    registry = await startRegistry(
      { ...common, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', KEY_CHANGE_RATE_LIMIT: '12' },
      loopback,
    );
  });
  after(async () => {
    await publicOnly.close();
    await registry.close();
    await web.close();
    await dns.close();
  });

  const claim = (on: TestRegistry, did: string, token: string, domain: string) =>
    on.app.inject({
      method: 'POST',
      url: agentPath(did, '/domains'),
      headers: bearer(token),
      payload: { domain },
    });

  test('the proof fetch goes through the webhook network policy: a name resolving to loopback is not fetched', async () => {
    const agent = await registerNamed(publicOnly, 'Loopback Prober');
    listed = [agent.did];
    const refused = await claim(publicOnly, agent.did, agent.token, `internal.test:${web.port}`);
    assert.equal(refused.statusCode, 422, refused.body);
    assert.match(refused.json<{ details: string }>().details, /non-public address/);
  });

  test('redirects are not followed and oversized documents are not read', async () => {
    const agent = await registerNamed(registry, 'Hostile Host Visitor');
    listed = [agent.did];
    const redirected = await claim(registry, agent.did, agent.token, `redirect.test:${web.port}`);
    assert.equal(redirected.statusCode, 422, redirected.body);
    assert.match(
      redirected.json<{ details: string }>().details,
      /answered 302, not 200 \(redirects are not followed\)/,
    );
    const huge = await claim(registry, agent.did, agent.token, `huge.test:${web.port}`);
    assert.equal(huge.statusCode, 422, huge.body);
    assert.match(huge.json<{ details: string }>().details, /larger than 65536 bytes/);
  });

  test('an agent holds at most 10 domains, and claims are rate limited per agent (failed ones count)', async () => {
    const hoarder = await registerNamed(registry, 'Domain Hoarder');
    for (let index = 0; index < 10; index += 1) {
      dns.records.set(`_agent-registry.d${index}.hoard.test`, [`did=${hoarder.did}`]);
      const claimed = await claim(registry, hoarder.did, hoarder.token, `d${index}.hoard.test`);
      assert.equal(claimed.statusCode, 200, claimed.body);
    }
    dns.records.set('_agent-registry.d10.hoard.test', [`did=${hoarder.did}`]);
    const eleventh = await claim(registry, hoarder.did, hoarder.token, 'd10.hoard.test');
    assert.equal(eleventh.statusCode, 409);
    assert.equal(eleventh.json<{ code: string }>().code, 'DOMAIN_LIMIT_REACHED');
    // Re-checking a held domain is a claim too: two more fit KEY_CHANGE_RATE_LIMIT (12), the next does not.
    assert.equal((await claim(registry, hoarder.did, hoarder.token, 'd0.hoard.test')).statusCode, 200);
    dns.records.delete('_agent-registry.d2.hoard.test');
    assert.equal((await claim(registry, hoarder.did, hoarder.token, 'd2.hoard.test')).statusCode, 422);
    const limited = await claim(registry, hoarder.did, hoarder.token, 'd1.hoard.test');
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json<{ code: string }>().code, 'IDENTITY_CLAIM_RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) > 0);
  });

  test('a handle cannot be taken under a domain another agent proved', async () => {
    const owner = await registerNamed(registry, 'Namespace Owner');
    const squatter = await registerNamed(registry, 'Namespace Squatter');
    dns.records.set('_agent-registry.owned.test', [`did=${owner.did}`]);
    assert.equal((await claim(registry, owner.did, owner.token, 'owned.test')).statusCode, 200);
    // The squatter's claim of the same domain finds no proof naming it.
    assert.equal((await claim(registry, squatter.did, squatter.token, 'owned.test')).statusCode, 422);
    const squat = await registry.app.inject({
      method: 'PUT',
      url: agentPath(squatter.did, '/handle'),
      headers: bearer(squatter.token),
      payload: { handle: 'test.owned/official' },
    });
    assert.equal(squat.statusCode, 409);
    assert.equal(squat.json<{ code: string }>().code, 'HANDLE_DOMAIN_NOT_VERIFIED');
  });
});
