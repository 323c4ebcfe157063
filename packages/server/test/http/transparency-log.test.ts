import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { canonicalJson } from '@agent-registry/protocol';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { stampAgentChange } from '../../src/modules/agents/change-feed-store.js';
import { loadLogSigningKey } from '../../src/modules/identity/signing-key.js';
import { registerNamed, startSecondNode } from '../support/discovery-helpers.js';
import {
  hashLeaf,
  merkleRoot,
  splitBundle,
  verifyCheckpoint,
  verifyInclusion,
  type VerifiedCheckpoint,
} from '../support/tlog-verifier.js';

type Injectable = Pick<TestRegistry, 'app'>;

interface LogProofBody {
  leaf_index: number;
  tree_size: number;
  inclusion_proof: string[];
  entry: string;
  checkpoint: string;
}

const b64 = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'base64'));
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

async function get(node: Injectable, url: string) {
  return node.app.inject({ method: 'GET', url });
}

async function verifiedCheckpoint(
  node: Injectable,
  key: string,
): Promise<VerifiedCheckpoint & { note: string }> {
  const response = await get(node, '/log/checkpoint');
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers['content-type']), /^text\/plain; charset=utf-8/);
  assert.match(String(response.headers['cache-control']), /max-age=\d$/);
  return { ...verifyCheckpoint(response.body, key), note: response.body };
}

/** Every entry of the log up to `size`, from entry bundles (full, then the partial one). */
async function entriesUpTo(node: Injectable, size: number): Promise<Uint8Array[]> {
  const entries: Uint8Array[] = [];
  for (let index = 0; index * 256 < size; index += 1) {
    const width = Math.min(256, size - index * 256);
    const path = `/log/tile/entries/${String(index).padStart(3, '0')}${width < 256 ? `.p/${width}` : ''}`;
    const response = await get(node, path);
    assert.equal(response.statusCode, 200, `${path}: ${response.body}`);
    assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
    entries.push(...splitBundle(response.rawPayload));
  }
  assert.equal(entries.length, size);
  return entries;
}

describe('transparency log (/log/, log-proof)', () => {
  let registry: TestRegistry;
  let verifierKey: string;

  before(async () => {
    registry = await startRegistry();
    const response = await get(registry, '/log/verifier-key');
    assert.equal(response.statusCode, 200);
    verifierKey = response.body.trim();
  });

  after(async () => {
    await registry.close();
  });

  test('every change is a leaf; the checkpoint is signed and its root is recomputed from the entries', async () => {
    const start = await verifiedCheckpoint(registry, verifierKey);
    assert.equal(start.origin, `${new URL(registry.config.publicUrl).host}/log`);
    assert.ok(verifierKey.startsWith(`${start.origin}+`));

    const heron = await registerNamed(registry, 'Log Heron');
    const updated = await registry.app.inject({
      method: 'PUT',
      url: agentPath(heron.did),
      headers: bearer(heron.token),
      payload: { description: 'Now logged' },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const wren = await registerNamed(registry, 'Log Wren');
    const deleted = await registry.app.inject({
      method: 'DELETE',
      url: agentPath(wren.did),
      headers: bearer(wren.token),
    });
    assert.ok(deleted.statusCode < 300, deleted.body);

    const checkpoint = await verifiedCheckpoint(registry, verifierKey);
    assert.equal(checkpoint.size, start.size + 4);
    const entries = await entriesUpTo(registry, checkpoint.size);
    assert.equal(hex(merkleRoot(entries)), hex(checkpoint.root));
    // The earlier checkpoint is a prefix of this one: the log only grew.
    assert.equal(hex(merkleRoot(entries.slice(0, start.size))), hex(start.root));

    const leaves = entries.slice(start.size).map((entry) => JSON.parse(Buffer.from(entry).toString('utf8')));
    assert.deepEqual(
      leaves.map((leaf) => [leaf.did, leaf.op]),
      [
        [heron.did, 'register'],
        [heron.did, 'update'],
        [wren.did, 'register'],
        [wren.did, 'deactivate'],
      ],
    );
    for (const entry of entries.slice(start.size)) {
      // Leaf data is RFC 8785 canonical JSON, byte for byte.
      const text = Buffer.from(entry).toString('utf8');
      assert.equal(canonicalJson(JSON.parse(text)), text);
    }

    // The level-0 tile holds each entry's leaf hash.
    const width = checkpoint.size % 256;
    const tile = await get(registry, `/log/tile/0/000${width === 0 ? '' : `.p/${width}`}`);
    assert.equal(tile.statusCode, 200);
    assert.equal(tile.headers['content-type'], 'application/octet-stream');
    assert.equal(tile.rawPayload.length, 32 * Math.min(256, checkpoint.size));
    entries.slice(0, tile.rawPayload.length / 32).forEach((entry, i) => {
      assert.equal(hex(tile.rawPayload.subarray(i * 32, i * 32 + 32)), hex(hashLeaf(entry)), `leaf ${i}`);
    });
  });

  test("an agent's log proof includes the profile it is served in the signed tree", async () => {
    const kite = await registerNamed(registry, 'Log Kite');
    const response = await get(registry, agentPath(kite.did, '/log-proof'));
    assert.equal(response.statusCode, 200, response.body);
    const proof = response.json<LogProofBody>();
    const checkpoint = verifyCheckpoint(proof.checkpoint, verifierKey);
    assert.equal(checkpoint.size, proof.tree_size);
    const entry = b64(proof.entry);
    assert.ok(
      verifyInclusion(
        proof.leaf_index,
        proof.tree_size,
        hashLeaf(entry),
        proof.inclusion_proof.map(b64),
        checkpoint.root,
      ),
    );
    const leaf = JSON.parse(Buffer.from(entry).toString('utf8')) as Record<string, unknown>;
    assert.equal(leaf.did, kite.did);
    const served = (await get(registry, agentPath(kite.did))).json<Record<string, unknown>>();
    // The leaf hashes the profile without its live members and its provenance (loggedProfile).
    assert.equal((served.provenance as { kind: string }).kind, 'registered');
    delete served.service_record;
    delete served.availability;
    delete served.provenance;
    assert.equal(leaf.profile_sha256, createHash('sha256').update(canonicalJson(served)).digest('hex'));
    assert.equal(leaf.time, served.updated_at);
  });

  test('a reputation change whose averages are not short decimals is logged exactly as it is served', async () => {
    const ibis = await registerNamed(registry, 'Log Ibis');
    // Doubles whose shortest text takes 16-17 digits: the record must carry them without rounding.
    await registry.ctx.database.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('agents')
        .set({ average_rating: 14 / 3, reputation_score: 0.1 + 0.2, total_reviews: 3 })
        .where('did', '=', ibis.did)
        .execute();
      await stampAgentChange(trx, ibis.did, 'reputation');
    });
    const proof = (await get(registry, agentPath(ibis.did, '/log-proof'))).json<LogProofBody>();
    const leaf = JSON.parse(Buffer.from(b64(proof.entry)).toString('utf8')) as Record<string, unknown>;
    assert.equal(leaf.op, 'reputation');
    const served = (await get(registry, agentPath(ibis.did))).json<Record<string, unknown>>();
    assert.equal(served.average_rating, 14 / 3);
    delete served.service_record;
    delete served.availability;
    delete served.provenance;
    assert.equal(leaf.profile_sha256, createHash('sha256').update(canonicalJson(served)).digest('hex'));
  });

  test('a second node (a restart) continues the same log and serves the identical checkpoint', async () => {
    const second = await startSecondNode(registry);
    try {
      const writes = [];
      for (let i = 0; i < 6; i += 1) {
        const node = i % 2 === 0 ? registry : { ...registry, app: second.app, ctx: second.ctx };
        writes.push(registerNamed(node, `Concurrent ${i}`));
      }
      await Promise.all(writes);
      const mine = await get(registry, '/log/checkpoint');
      const theirs = await get(second, '/log/checkpoint');
      assert.equal(theirs.body, mine.body);
      const checkpoint = verifyCheckpoint(mine.body, verifierKey);
      assert.equal(hex(merkleRoot(await entriesUpTo(second, checkpoint.size))), hex(checkpoint.root));
    } finally {
      await second.close();
    }
  });

  test('a tampered or deleted record changes what a fresh node serves, and the verifier sees it', async () => {
    await registerNamed(registry, 'Log Tamper Target');
    const before = verifyCheckpoint((await get(registry, '/log/checkpoint')).body, verifierKey);
    const db = registry.ctx.database.db;
    const { first_seq: firstSeq } = await db
      .selectFrom('log_start')
      .select('first_seq')
      .executeTakeFirstOrThrow();
    const victim = Number(firstSeq) + before.size - 1;
    const row = await db
      .selectFrom('log_records')
      .selectAll()
      .where('seq', '=', victim)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('log_records')
      .set({ record: row.record.replace('Log Tamper Target', 'Log Tampered') })
      .where('seq', '=', victim)
      .execute();
    const fresh = await startSecondNode(registry);
    try {
      const after = verifyCheckpoint((await get(fresh, '/log/checkpoint')).body, verifierKey);
      assert.equal(after.size, before.size);
      assert.notEqual(hex(after.root), hex(before.root), 'two roots for one size: a fork');
    } finally {
      await fresh.close();
      await db.updateTable('log_records').set({ record: row.record }).where('seq', '=', victim).execute();
    }
  });

  test('bad tile paths, tiles beyond the tree and unknown DIDs are clear 4xx JSON', async () => {
    const { size } = verifyCheckpoint((await get(registry, '/log/checkpoint')).body, verifierKey);
    const cases: [string, number, string][] = [
      ['/log/tile/0/1', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/64/000', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/0/000.p/256', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/entries/x000', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/0/000', 404, 'TILE_NOT_FOUND'],
      ['/log/tile/0/x001/000', 404, 'TILE_NOT_FOUND'],
      [`/log/tile/0/000.p/${size + 1}`, 404, 'TILE_NOT_FOUND'],
      [`/log/tile/entries/000.p/${size + 1}`, 404, 'TILE_NOT_FOUND'],
      ['/log/tile/1/000.p/1', 404, 'TILE_NOT_FOUND'],
      [
        agentPath('did:pkh:eip155:1:0x0000000000000000000000000000000000000001', '/log-proof'),
        404,
        'AGENT_NOT_FOUND',
      ],
      [agentPath('not-a-did', '/log-proof'), 400, 'INVALID_DID'],
    ];
    for (const [url, status, code] of cases) {
      const response = await get(registry, url);
      assert.equal(response.statusCode, status, `${url}: ${response.body}`);
      assert.equal(response.json<{ code: string }>().code, code, url);
    }
  });
});

describe('an operator-supplied log signing key (LOG_SIGNING_KEY)', () => {
  test('two registries on separate databases given one key publish the same verifier key and sign with it', async () => {
    const key = generateKeyPairSync('ed25519').privateKey;
    const pem = key.export({ format: 'pem', type: 'pkcs8' }).toString();
    const raw = key.export({ format: 'jwk' }).x as string;
    const nodes = [
      await startRegistry({ LOG_SIGNING_KEY: pem }),
      await startRegistry({ LOG_SIGNING_KEY: pem }),
    ];
    const unset = await startRegistry();
    try {
      const keys = await Promise.all(
        nodes.map(async (node) => (await get(node, '/log/verifier-key')).body.trim()),
      );
      assert.equal(keys[0], keys[1]);
      // The key material is 0x01 then the configured public key.
      const material = b64(keys[0]!.split('+').slice(2).join('+'));
      assert.deepEqual([...material.subarray(1)], [...Buffer.from(raw, 'base64url')]);
      for (const node of nodes) verifyCheckpoint((await get(node, '/log/checkpoint')).body, keys[0]!);
      assert.notEqual((await get(unset, '/log/verifier-key')).body.trim(), keys[0]);
    } finally {
      for (const node of [...nodes, unset]) await node.close();
    }
  });

  test('a key that is not Ed25519 is refused with the setting named', async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const node = await startRegistry();
    try {
      await assert.rejects(
        loadLogSigningKey(node.ctx.database.db, node.clock, pem),
        /LOG_SIGNING_KEY must be an Ed25519 key/,
      );
      await assert.rejects(
        loadLogSigningKey(node.ctx.database.db, node.clock, 'not a key'),
        /LOG_SIGNING_KEY is neither/,
      );
    } finally {
      await node.close();
    }
  });
});
