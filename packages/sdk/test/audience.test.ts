import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type RegistryProcess, type TestDatabase } from '@agent-registry/testkit';
import { AgentKey, RegistryClient, RegistryError } from '../src/index.js';
import { isLocalAddress } from '../src/client/local-address.js';
import { registryProcess } from './registry-process.js';

const PUBLIC_URL = 'http://localhost:8080';

describe('the audience: the registry names its own URL, the client signs for it', () => {
  let database: TestDatabase;
  let registry: RegistryProcess;
  before(async () => {
    database = await createTestDatabase('sqlite');
    // Reached at 127.0.0.1:<port>, it calls itself localhost:8080, as a registry behind a proxy would.
    registry = await registryProcess(database, { publicUrl: PUBLIC_URL });
  });
  after(async () => {
    await registry.stop();
    await database.drop();
  });

  test('GET /.well-known/agent-registry.json names the audience', async () => {
    const response = await fetch(`${registry.url}/.well-known/agent-registry.json`);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { audience: string }).audience, PUBLIC_URL);
  });

  test('registration and login through another address than PUBLIC_URL work, asking once', async () => {
    let asked = 0;
    const counting: typeof fetch = (input, init) => {
      if (String(input).endsWith('/.well-known/agent-registry.json')) asked += 1;
      return fetch(input, init);
    };
    const key = AgentKey.generateEd25519();
    const client = new RegistryClient({ registry: registry.url, key, fetch: counting });
    const { did } = await client.register({ name: 'Reached by IP', capabilities: [{ type: 'echo' }] });
    assert.equal(client.audience, PUBLIC_URL);
    const again = await client.login();
    assert.equal(again.did, did);
    assert.equal(asked, 1, 'the audience is asked once and cached');
  });

  test('an audience given by the caller is used as given, and refused when it is not this registry', async () => {
    const elsewhere = new RegistryClient({
      registry: registry.url,
      key: AgentKey.generateEd25519(),
      audience: 'https://other.example',
    });
    await assert.rejects(
      elsewhere.register({ name: 'Elsewhere', capabilities: [{ type: 'echo' }] }),
      (error: unknown) => {
        assert.ok(error instanceof RegistryError);
        assert.equal(error.code, 'AUDIENCE_MISMATCH');
        return true;
      },
    );
  });
});

describe('a public registry that names another origin is not believed', () => {
  test('the client signs for the address it reached, never asking', async () => {
    const seen: string[] = [];
    const sent: Record<string, unknown>[] = [];
    const fake: typeof fetch = async (input, init) => {
      seen.push(String(input));
      if (String(input).endsWith('/.well-known/agent-registry.json'))
        return Response.json({ audience: 'https://victim.example', version: '1' });
      sent.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return Response.json(
        { did: 'did:web:x', token: 'x.y.z', expires_at: '2030-01-01T00:00:00Z' },
        { status: 201 },
      );
    };
    const client = new RegistryClient({
      registry: 'https://registry.example',
      key: AgentKey.generateEd25519(),
      fetch: fake,
    });
    await client.register({ name: 'Careful', capabilities: [] });
    assert.deepEqual(seen, ['https://registry.example/api/agents/register']);
    assert.equal(sent[0]?.audience, 'https://registry.example');
  });

  test('local addresses', () => {
    for (const url of [
      'http://127.0.0.1:8080',
      'http://localhost:1',
      'http://[::1]:8080',
      'http://10.1.2.3',
      'http://192.168.0.9',
      'http://registry:8080',
    ])
      assert.equal(isLocalAddress(url), true, url);
    for (const url of [
      'https://registry.example',
      'http://8.8.8.8',
      'http://172.32.0.1',
      'http://[2001:db8::1]',
    ])
      assert.equal(isLocalAddress(url), false, url);
  });
});
