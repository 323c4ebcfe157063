import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Wallet } from 'ethers';
import { SignJWT, decodeJwt } from 'jose';
import {
  AgentKey,
  InvocationFailedError,
  InvocationTimeoutError,
  LogVerificationError,
  NetworkError,
  RegistryClient,
  RegistryError,
  serve,
  type Profile,
} from '../src/index.js';
import {
  freePort,
  createTestDatabase,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { registryProcess, tokenSigningKey } from './registry-process.js';

const profile = (name: string): Profile => ({
  name,
  description: 'Translates English to French',
  capabilities: [
    {
      type: 'translation',
      description: 'English to French',
      tags: ['en', 'fr'],
      input_schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    },
  ],
  tags: ['language', 'fr'],
});

describe('RegistryClient against a real registry (SQLite)', () => {
  let database: TestDatabase;
  let registry: RegistryProcess;
  before(async () => {
    database = await createTestDatabase('sqlite');
    registry = await registryProcess(database);
  });
  after(async () => {
    await registry.stop();
    await database.drop();
  });

  const keys: [string, () => AgentKey][] = [
    ['ed25519', () => AgentKey.generateEd25519()],
    ['secp256k1 from hex', () => AgentKey.fromSecp256k1(Wallet.createRandom().privateKey, 'eip155:137')],
    ['EIP-191 signer (ethers Wallet)', () => AgentKey.fromEip191Signer(Wallet.createRandom(), 'eip155:1')],
    [
      'EIP-191 signer exposing only signMessage',
      () => {
        const wallet = Wallet.createRandom();
        return AgentKey.fromEip191Signer(
          { signMessage: (message) => wallet.signMessage(message) },
          'eip155:8453',
        );
      },
    ],
  ];

  for (const [label, makeKey] of keys) {
    test(`register, login and update with a ${label} key; the registration is bound to this registry`, async () => {
      const key = makeKey();
      const known = await key.did();
      const sessions: string[] = [];
      const client = new RegistryClient({
        registry: registry.url,
        key,
        onToken: (s) => sessions.push(s.token),
      });
      const { did, token } = await client.register(profile(`Agent ${label}`));
      if (key.keyType === 'secp256k1') assert.equal(did, known, 'the did:pkh is known before registering');
      else assert.equal(known, null);
      assert.equal(decodeJwt(token).aud, registry.url);
      assert.equal(client.did, did);
      const first = client.token;
      await client.login();
      assert.notEqual(client.token, first);
      assert.equal(sessions.length, 2);
      const updated = await client.updateAgent({ description: 'Now also German' });
      assert.equal(updated.description, 'Now also German');
      assert.equal(updated.public_key, await key.publicKey());
    });
  }

  test('verifyAgent proves the served profile is the logged one, and names a profile that is not', async () => {
    const client = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    const { did } = await client.register(profile('Logged Translator'));
    await client.updateAgent({ description: 'Now with a logged update' });
    const verified = await client.verifyAgent(did);
    assert.equal(verified.leaf.did, did);
    assert.equal(verified.leaf.op, 'update');
    assert.equal(verified.profile.description, 'Now with a logged update');
    assert.ok(verified.leafIndex >= 1 && verified.leafIndex < verified.treeSize);

    // A registry (or a cache in between) that serves something else than it logged is caught.
    const lying = new RegistryClient({
      registry: registry.url,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!String(input).endsWith(encodeURIComponent(did))) return response;
        const body = (await response.json()) as Record<string, unknown>;
        return Response.json({ ...body, description: 'Quietly changed' });
      },
    });
    await assert.rejects(lying.verifyAgent(did), (error: Error) => {
      assert.ok(error instanceof LogVerificationError);
      assert.match(error.message, /is not the one logged at position/);
      return true;
    });
    // A checkpoint checked against another key does not verify.
    const otherKey = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
    await assert.rejects(client.verifyAgent(did, { verifierKey: otherKey }), LogVerificationError);
  });

  test('followLog mirrors the log, verifying each catch-up, and stops at a fork or a rewritten entry', async () => {
    const reader = new RegistryClient({ registry: registry.url });
    const verifierKey = (await (await fetch(`${registry.url}/log/verifier-key`)).text()).trim();
    const first = await reader.followLog({ verifierKey });
    assert.ok(first.state.size >= 1);
    assert.equal(first.entries.length, first.state.size);
    const writer = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    const { did } = await writer.register(profile('Mirrored Translator'));
    const second = await reader.followLog({ verifierKey, state: first.state });
    assert.equal(second.state.size, first.state.size + 1);
    assert.deepEqual(
      second.entries.map((leaf) => [leaf.did, leaf.op]),
      [[did, 'register']],
    );

    const forked = { ...second.state, root: first.state.root };
    await assert.rejects(
      reader.followLog({ verifierKey, state: forked }),
      /forked checkpoint: two different roots/,
    );
    const ahead = { ...second.state, size: second.state.size + 5 };
    await assert.rejects(reader.followLog({ verifierKey, state: ahead }), /the log shrank/);
    // A registry that serves an entry other than the one it logged.
    const tampering = new RegistryClient({
      registry: registry.url,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!String(input).includes('/log/tile/entries/')) return response;
        const bytes = new Uint8Array(await response.arrayBuffer());
        bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 1;
        return new Response(bytes);
      },
    });
    await assert.rejects(
      tampering.followLog({ verifierKey, state: first.state }),
      /do not hash to the checkpoint's root/,
    );
    assert.equal(second.profiles.length, 1);
    assert.equal(second.profiles[0]?.did, did);
    assert.equal(second.profiles[0]?.profile?.name, 'Mirrored Translator');
    // A registry that serves a profile other than the one its log holds for the agent.
    const lying = new RegistryClient({
      registry: registry.url,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!String(input).endsWith(`/api/agents/${encodeURIComponent(did)}`)) return response;
        const body = (await response.json()) as Record<string, unknown>;
        return Response.json({ ...body, description: 'Not what was logged' });
      },
    });
    await assert.rejects(lying.followLog({ verifierKey, state: first.state }), (error: Error) => {
      assert.ok(error instanceof LogVerificationError);
      assert.match(
        error.message,
        new RegExp(
          `the profile served for ${did} .* is not the one logged at position ${first.state.size}, sequence \\d+`,
        ),
      );
      return true;
    });
  });

  test('followLog leaves an agent that changed after the checkpoint pending, once its later leaf extends the verified tree', async () => {
    const verifierKey = (await (await fetch(`${registry.url}/log/verifier-key`)).text()).trim();
    const start = await new RegistryClient({ registry: registry.url }).followLog({ verifierKey });
    const writer = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    const { did } = await writer.register(profile('Quick Changer'));
    const staleCheckpoint = await (await fetch(`${registry.url}/log/checkpoint`)).text();
    await writer.updateAgent({ description: 'Changed after the checkpoint was read' });
    // Reads the checkpoint of before the update, as a reader racing the writer would.
    const racing = new RegistryClient({
      registry: registry.url,
      fetch: async (input, init) =>
        String(input).endsWith('/log/checkpoint') ? new Response(staleCheckpoint) : fetch(input, init),
    });
    const caughtUp = await racing.followLog({ verifierKey, state: start.state });
    assert.deepEqual(
      caughtUp.profiles.map((followed) => [followed.did, followed.profile]),
      [[did, null]],
    );
  });

  test('a registration signed for another registry is refused by this one', async () => {
    const key = AgentKey.generateEd25519();
    const elsewhere = new RegistryClient({ registry: registry.url, key, audience: 'https://other.example' });
    await assert.rejects(elsewhere.register(profile('Elsewhere')), (error: unknown) => {
      assert.ok(error instanceof RegistryError);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'AUDIENCE_MISMATCH');
      return true;
    });
  });

  test('an expired token is renewed once, transparently', async () => {
    const key = AgentKey.generateEd25519();
    const { did } = await new RegistryClient({ registry: registry.url, key }).register(profile('Expiring'));
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
      .setSubject(did)
      .setIssuer(registry.url)
      .setAudience(registry.url)
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .setJti(crypto.randomUUID())
      .sign(tokenSigningKey);
    // The registry itself says it expired.
    const bare = new RegistryClient({ registry: registry.url, token: expired });
    await assert.rejects(bare.updateAgent({ name: 'x' }), { code: 'TOKEN_EXPIRED', status: 401 });

    const renewed: string[] = [];
    const client = new RegistryClient({
      registry: registry.url,
      key,
      token: expired,
      onToken: (s) => renewed.push(s.token),
    });
    assert.equal(client.did, did, 'the DID is read from the token');
    const updated = await client.updateAgent({ name: 'Renewed' });
    assert.equal(updated.name, 'Renewed');
    assert.equal(renewed.length, 1);
    assert.notEqual(client.token, expired);
  });

  test('a revoked (unverifiable) token is renewed too; concurrent requests share one renewal', async () => {
    const key = AgentKey.fromSecp256k1(Wallet.createRandom().privateKey, 'eip155:1');
    const did = (await new RegistryClient({ registry: registry.url, key }).register(profile('Revoked'))).did;
    const logins: string[] = [];
    const client = new RegistryClient({
      registry: registry.url,
      key,
      did,
      token: 'not.a.token',
      onToken: (s) => logins.push(s.token),
    });
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => client.updateAgent({ description: `take ${n}` })),
    );
    assert.equal(results.length, 4);
    assert.equal(logins.length, 1);
  });

  test('errors carry code, status, details and the request id', async () => {
    const client = new RegistryClient({ registry: registry.url });
    const missing = `did:web:127.0.0.1%3A${registry.port}:agent:${'ab'.repeat(16)}`;
    await assert.rejects(client.getAgent(missing), (error: unknown) => {
      assert.ok(error instanceof RegistryError);
      assert.equal(error.status, 404);
      assert.equal(error.code, 'AGENT_NOT_FOUND');
      assert.match(error.details, /no active agent is registered/i);
      assert.match(error.requestId ?? '', /.+/);
      return true;
    });
    const unreachable = new RegistryClient({ registry: `http://127.0.0.1:${await freePort()}` });
    await assert.rejects(unreachable.getStats(), (error: unknown) => {
      assert.ok(error instanceof NetworkError);
      assert.equal(error.status, 0);
      assert.equal(error.code, 'NETWORK_ERROR');
      return true;
    });
  });

  test('every read endpoint, search, reviews and reputation', async () => {
    const targetKey = AgentKey.fromSecp256k1(Wallet.createRandom().privateKey, 'eip155:1');
    const target = new RegistryClient({ registry: registry.url, key: targetKey });
    const { did } = await target.register(profile('Reviewed Translator'));
    await target.setInvocation({ enabled: true, delivery_mode: 'queue' });
    assert.deepEqual(await target.getInvocation(), { enabled: true, delivery_mode: 'queue' });
    const worker = serve({
      client: target,
      capabilities: { translation: async (input) => ({ text: `fr: ${String(input.text)}` }) },
    });
    try {
      const caller = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
      await caller.register(profile('Caller'));
      const raw = await caller.invokeRaw(did, 'translation', { text: 'hello' }, { timeoutMs: 20_000 });
      assert.deepEqual(raw.output, { text: 'fr: hello' });
      const task = await caller.getTask(raw.task_id);
      assert.equal(task.status, 'completed');

      const review = await caller.review({
        targetDid: did,
        rating: 9,
        comment: 'fast',
        callRecordId: raw.task_id,
      });
      assert.equal(review.verified, true);
      const edited = await caller.editReview(review.review_id, { rating: 8.5 });
      assert.equal(edited.rating, 8.5);
      assert.equal((await caller.myReviews()).total, 1);
      assert.equal((await caller.getReviews(did, { limit: 5 })).reviews[0]?.review_id, review.review_id);
      assert.equal((await caller.getReputation(did)).total_reviews, 1);

      const hits = await caller.search({
        q: 'Reviewed',
        capability: 'translation',
        tags: ['fr'],
        minReputation: 0,
      });
      assert.ok(hits.agents.some((agent) => agent.did === did));
      // Cursor paging: one agent per page, every agent once, the same as one big page.
      const everyAgent = (await caller.search({ limit: 100, sort: 'created_at' })).agents.map(
        (agent) => agent.did,
      );
      const paged: string[] = [];
      for await (const agent of caller.searchAll({ limit: 1, sort: 'created_at' })) paged.push(agent.did);
      assert.ok(everyAgent.length >= 2);
      assert.deepEqual(paged, everyAgent);
      // The change feed from the start, two changes per page: every active agent, each with its profile.
      const mirrored = new Map<string, string>();
      let resumeFrom: string | undefined;
      for await (const change of caller.followChanges({
        limit: 2,
        onCursor: (cursor) => (resumeFrom = cursor),
      })) {
        if (change.profile === null) mirrored.delete(change.did);
        else mirrored.set(change.did, change.profile.name);
      }
      assert.ok(resumeFrom !== undefined);
      assert.ok(everyAgent.every((agentDid) => mirrored.has(agentDid)));
      assert.equal((await caller.changes({ since: resumeFrom })).changes.length, 0);
      assert.equal((await caller.resolveDid(did)).id, did);
      const payment = await caller.getPaymentAddress(did);
      assert.equal(payment.address, await targetKey.address());
      assert.ok((await caller.listChains()).chains.length >= 4);
      assert.equal((await caller.getChain('eip155:1')).chain.chain_id, 'eip155:1');
      assert.equal(typeof (await caller.getStats()).agents_count, 'number');
      assert.ok((await caller.getJwks()).keys.length >= 1);
      await caller.health();
    } finally {
      await worker.close();
    }
    await target.deactivate();
    await assert.rejects(target.updateAgent({ name: 'gone' }), { code: 'AGENT_DEACTIVATED' });
  });

  test('invoke throws typed errors with the task id', async () => {
    const agentKey = AgentKey.generateEd25519();
    const agent = new RegistryClient({ registry: registry.url, key: agentKey });
    const { did } = await agent.register(profile('Failing'));
    await agent.setInvocation({ enabled: true, delivery_mode: 'queue' });
    const caller = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
    await caller.register(profile('Impatient caller'));

    // Nobody serves the queue: the deadline passes.
    await assert.rejects(
      caller.invoke(did, 'translation', { text: 'x' }, { timeoutMs: 300 }),
      (error: unknown) => {
        assert.ok(error instanceof InvocationTimeoutError);
        assert.equal(error.status, 504);
        assert.match(error.taskId ?? '', /.+/);
        return true;
      },
    );

    const worker = serve({
      client: agent,
      capabilities: {
        translation: async () => {
          throw new Error('dictionary missing');
        },
      },
    });
    try {
      await assert.rejects(
        caller.invoke(did, 'translation', { text: 'x' }, { timeoutMs: 20_000 }),
        (error: unknown) => {
          assert.ok(error instanceof InvocationFailedError);
          assert.equal(error.status, 502);
          assert.match(error.details, /dictionary missing/);
          assert.match(error.taskId ?? '', /.+/);
          return true;
        },
      );
    } finally {
      await worker.close();
    }
  });
});
