import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  EMPTY_FOLLOW_STATE,
  canonicalJson,
  decodeLeaf,
  entryBundlePath,
  extendLog,
  isProfileLeaf,
  verifyLogProof,
  type LogProof,
} from '@agent-registry/protocol';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';
import { appendLogEvent } from '../../../src/modules/agents/log-event-store.js';
import { registerNamed } from '../../support/discovery-helpers.js';
import { merkleRoot, splitBundle, verifyCheckpoint } from '../../support/tlog-verifier.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('event leaves in the transparency log', () => {
  let registry: TestRegistry;
  let verifierKey: string;

  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const entriesUpTo = async (size: number): Promise<Uint8Array[]> => {
    const entries: Uint8Array[] = [];
    for (let index = 0; index * 256 < size; index += 1) {
      const response = await get(`/log/${entryBundlePath(index, Math.min(256, size - index * 256))}`);
      assert.equal(response.statusCode, 200, response.body);
      entries.push(...splitBundle(response.rawPayload));
    }
    return entries;
  };
  const appendEvent = (subject: string, fields: Record<string, string | number | boolean | null>) =>
    registry.ctx.database.db
      .transaction()
      .execute((trx) => appendLogEvent(trx, { op: 'test.noted', subject, time: 1_700_000_000_123, fields }));

  before(async () => {
    registry = await startRegistry();
    verifierKey = (await get('/log/verifier-key')).body.trim();
  });

  after(async () => {
    await registry.close();
  });

  test('an event is one canonical leaf between profile changes; followers verify it and proofs stay profile leaves', async () => {
    const heron = await registerNamed(registry, 'Event Heron');
    const seq = await appendEvent(heron.did, { reason: 'spam', count: 2, final: false, note: null });
    const updated = await registry.app.inject({
      method: 'PUT',
      url: agentPath(heron.did),
      headers: bearer(heron.token),
      payload: { description: 'Changed after the event' },
    });
    assert.equal(updated.statusCode, 200, updated.body);

    const checkpoint = verifyCheckpoint((await get('/log/checkpoint')).body, verifierKey);
    const entries = await entriesUpTo(checkpoint.size);
    assert.equal(hex(merkleRoot(entries)), hex(checkpoint.root));
    const texts = entries.map((entry) => Buffer.from(entry).toString('utf8'));
    const eventText = texts.find((text) => text.includes('"test.noted"'));
    assert.ok(eventText, 'the event is in the log');
    assert.equal(canonicalJson(JSON.parse(eventText)), eventText);
    assert.deepEqual(JSON.parse(eventText), {
      count: 2,
      final: false,
      note: null,
      op: 'test.noted',
      reason: 'spam',
      seq,
      subject: heron.did,
      time: 1_700_000_000_123,
      v: 1,
    });
    const ops = texts.map((text) => JSON.parse(text) as { op: string }).map((leaf) => leaf.op);
    assert.deepEqual(ops.slice(-3), ['register', 'test.noted', 'update']);

    // The protocol package's follower proves the whole log, the event leaf decoded as an event.
    const followed = await extendLog(
      {
        checkpoint: async () => (await get('/log/checkpoint')).body,
        entryBundle: async (index, width) => (await get(`/log/${entryBundlePath(index, width)}`)).rawPayload,
      },
      verifierKey,
      EMPTY_FOLLOW_STATE,
    );
    const event = followed.entries.find((leaf) => !isProfileLeaf(leaf));
    assert.ok(event && !isProfileLeaf(event));
    assert.equal(event.subject, heron.did);
    assert.equal(event.reason, 'spam');

    // The agent's proof still names its latest profile change, after the event.
    const proof = (await get(`${agentPath(heron.did)}/log-proof`)).json<LogProof>();
    const verified = verifyLogProof(proof, verifierKey, heron.did);
    assert.equal(verified.leaf.op, 'update');

    // Search and the change feed read past the number the event took.
    const search = await get('/api/agents/search?q=Event%20Heron');
    assert.equal(search.statusCode, 200, search.body);
    assert.ok(search.body.includes(heron.did));
    const changes = await get('/api/agents/changes?limit=100');
    assert.equal(changes.statusCode, 200, changes.body);
  });

  test('a leaf that is neither a profile change nor a well-formed event is refused with what is wrong', () => {
    const leaf = (value: object) => new TextEncoder().encode(JSON.stringify(value));
    assert.throws(
      () => decodeLeaf(leaf({ v: 1, seq: 3, op: 'Bad Kind', subject: 'did:x', time: 1 }), 3),
      /log entry 3 is not an event leaf: op is not a kind name/,
    );
    assert.throws(
      () => decodeLeaf(leaf({ v: 1, seq: 3, op: 'x.y', subject: 'did:x', time: 1, nested: { a: 1 } }), 3),
      /nested is not a string, number, boolean or null/,
    );
    // A kind this version does not know is well formed: passed on for the caller to skip.
    const unknown = decodeLeaf(leaf({ v: 1, seq: 4, op: 'later.kind', subject: 'did:x', time: 1, n: 2 }));
    assert.ok(!isProfileLeaf(unknown));
  });

  test('an event cannot borrow a profile operation or a field the leaf owns', async () => {
    await assert.rejects(
      registry.ctx.database.db
        .transaction()
        .execute((trx) => appendLogEvent(trx, { op: 'update', subject: 'did:x', time: 1 })),
      /not an event kind name/,
    );
    await assert.rejects(
      appendEvent('did:x', { profile_sha256: 'ab' }),
      /cannot carry a field named "profile_sha256"/,
    );
  });
});
