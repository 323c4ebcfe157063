import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { canonicalJson } from '@agent-registry/protocol';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  sql,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import pg from 'pg';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { stampAgentChange } from '../../../src/modules/agents/change-feed-store.js';
import type { DatabaseSchema } from '../../../src/db/schema/index.js';
import type { DatabaseConfig } from '../../../src/kernel/config.js';
import { loadLogSigningKey } from '../../../src/modules/identity/signing-key.js';
import { NoteSigner } from '../../../src/modules/transparency-log/note.js';
import { TransparencyLogService } from '../../../src/modules/transparency-log/transparency-log.js';
import { registerNamed, startSecondNode } from '../../support/discovery-helpers.js';
import {
  hashLeaf,
  merkleRoot,
  splitBundle,
  verifyCheckpoint,
  verifyInclusion,
  type VerifiedCheckpoint,
} from '../../support/tlog-verifier.js';

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
    assert.equal(start.origin, `${new URL(registry.config.identity.publicUrl).host}/log`);
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
      // One path per tile (tlog-tiles): no leading x000 element, so no second name for tile 0 or 1.
      ['/log/tile/0/x000/000', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/0/x000/001.p/1', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/entries/x000/x000/000', 400, 'INVALID_TILE_PATH'],
      ['/log/tile/1/x000/000.p/1', 400, 'INVALID_TILE_PATH'],
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

describe('the transparency log of a node whose database moves under it', () => {
  let registry: TestRegistry;
  let verifierKey: string;

  before(async () => {
    registry = await startRegistry();
    verifierKey = (await get(registry, '/log/verifier-key')).body.trim();
  });

  after(async () => {
    await registry.close();
  });

  test('a restore the head has already passed again is noticed: the tree is rebuilt from the database', async () => {
    for (let i = 0; i < 4; i += 1) await registerNamed(registry, `Restored log ${i}`);
    const read = await verifiedCheckpoint(registry, verifierKey);
    // What a restore leaves (SQLite has no table identity to tell it by): the last two changes gone,
    // the head back before them. Then more writes than it took back, before the node's next log
    // request, so the head is past what the node had read.
    const { db } = registry.ctx.database;
    const { first_seq } = await db.selectFrom('log_start').select('first_seq').executeTakeFirstOrThrow();
    const kept = Number(first_seq) + read.size - 3;
    await db.deleteFrom('agents').where('change_seq', '>', kept).execute();
    await db.deleteFrom('log_records').where('seq', '>', kept).execute();
    await sql`update change_feed_head set seq = ${kept} where id = 1`.execute(db);
    for (let i = 0; i < 3; i += 1) await registerNamed(registry, `After restore ${i}`);

    const checkpoint = await verifiedCheckpoint(registry, verifierKey);
    assert.equal(checkpoint.size, read.size + 1);
    const entries = await entriesUpTo(registry, checkpoint.size);
    assert.equal(hex(merkleRoot(entries)), hex(checkpoint.root), 'the root of the entries it serves');
    const level0 = await get(registry, `/log/tile/0/000.p/${checkpoint.size}`);
    assert.equal(level0.statusCode, 200);
    entries.forEach((entry, i) => {
      assert.equal(hex(level0.rawPayload.subarray(i * 32, i * 32 + 32)), hex(hashLeaf(entry)), `leaf ${i}`);
    });
    const fresh = await startSecondNode(registry);
    try {
      assert.equal((await get(fresh, '/log/checkpoint')).body, checkpoint.note);
    } finally {
      await fresh.close();
    }
  });

  test('a change-feed head left behind the log (a hand-edited database) costs one rebuild, not one per request', async () => {
    for (let i = 0; i < 3; i += 1) await registerNamed(registry, `Head behind ${i}`);
    const read = await verifiedCheckpoint(registry, verifierKey);
    const { db } = registry.ctx.database;
    const { seq } = await db
      .selectFrom('change_feed_head')
      .select('seq')
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    await sql`update change_feed_head set seq = ${Number(seq) - 2} where id = 1`.execute(db);
    const rebuildsBefore = registry.ctx.transparencyLog.rebuilds;
    for (let i = 0; i < 5; i += 1) {
      const checkpoint = await verifiedCheckpoint(registry, verifierKey);
      assert.equal(checkpoint.size, read.size, 'the log records are all still there');
    }
    assert.equal(
      registry.ctx.transparencyLog.rebuilds - rebuildsBefore,
      1,
      'the head moved back once: one rebuild, whatever the number of requests after it',
    );
    await sql`update change_feed_head set seq = ${Number(seq)} where id = 1`.execute(db);
  });

  test("a log proof asked right after the agent's write, while a catch-up that read before it runs, finds it", async () => {
    // The log reads through its own connection, whose driver can hold back one read of log_records
    // (with the connection already given back): a catch-up is kept running, its records read, while a
    // write commits and the proof is asked.
    let holdNext = false;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let caught = (): void => undefined;
    const held = new Promise<void>((resolve) => (caught = resolve));
    let agentRead = (): void => undefined;
    const agentReadDone = new Promise<void>((resolve) => (agentRead = resolve));
    const db = new Kysely<DatabaseSchema>({
      dialect: gatedDialect(innerDialect(registry.config.database), (query) => {
        if (/^select .* from "log_records"/.test(query) && holdNext) {
          holdNext = false;
          caught();
          return released;
        }
        if (/^select "change_seq" from "agents"/.test(query)) agentRead();
        return undefined;
      }),
    });
    try {
      const { publicUrl } = registry.config.identity;
      const log = new TransparencyLogService({
        db,
        publicUrl,
        didWebDomain: registry.config.identity.didWebDomain,
        signer: new NoteSigner(
          `${new URL(publicUrl).host}/log`,
          await loadLogSigningKey(registry.ctx.database.db, registry.clock),
        ),
      });
      await log.checkpoint();
      holdNext = true;
      const running = log.checkpoint();
      await held;
      const wren = await registerNamed(registry, 'Proof right after');
      const proof = log.proof(wren.did);
      // The proof has read the agent's change number; once that read's promise chain has run, it is
      // waiting on the catch-up still held.
      await agentReadDone;
      await new Promise((resolve) => setImmediate(resolve));
      release();
      await running;
      const answer = await proof;
      const leaf = JSON.parse(Buffer.from(b64(answer.entry)).toString('utf8')) as { did: string };
      assert.equal(leaf.did, wren.did);
      assert.equal(answer.leaf_index, answer.tree_size - 1);
    } finally {
      release();
      await db.destroy();
    }
  });
});

/** A plain Kysely dialect on the test registry's database. */
function innerDialect(config: DatabaseConfig): Dialect {
  return config.kind === 'sqlite'
    ? new SqliteDialect({ database: new SqliteDatabase(config.path) })
    : new PostgresDialect({ pool: new pg.Pool({ connectionString: config.url, max: 2 }) });
}

/**
 * A dialect that shows `hold` each query once its result is in; the result then waits for the promise
 * `hold` returns, after the connection is given back, so the caller's other queries go on meanwhile.
 */
function gatedDialect(inner: Dialect, hold: (sql: string) => Promise<void> | undefined): Dialect {
  class GatedConnection implements DatabaseConnection {
    wait: Promise<void> | undefined;
    constructor(readonly inner: DatabaseConnection) {}
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const result = await this.inner.executeQuery<R>(query);
      this.wait = hold(query.sql) ?? this.wait;
      return result;
    }
    streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
      return this.inner.streamQuery<R>(query, chunkSize);
    }
  }
  const gated = (connection: DatabaseConnection): DatabaseConnection =>
    connection instanceof GatedConnection ? connection.inner : connection;
  return {
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createDriver: (): Driver => {
      const driver = inner.createDriver();
      return {
        init: () => driver.init(),
        destroy: () => driver.destroy(),
        acquireConnection: async () => new GatedConnection(await driver.acquireConnection()),
        beginTransaction: (connection, settings) => driver.beginTransaction(gated(connection), settings),
        commitTransaction: (connection) => driver.commitTransaction(gated(connection)),
        rollbackTransaction: (connection) => driver.rollbackTransaction(gated(connection)),
        releaseConnection: async (connection) => {
          await driver.releaseConnection(gated(connection));
          if (connection instanceof GatedConnection && connection.wait !== undefined) {
            const wait = connection.wait;
            connection.wait = undefined;
            await wait;
          }
        },
      };
    },
  };
}

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
