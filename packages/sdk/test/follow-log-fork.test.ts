import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { test } from 'node:test';
import {
  canonicalJson,
  followStateOf,
  hashLeaf,
  merkleRoot,
  profileSha256,
  toBase64,
  type LogLeaf,
} from '@agent-registry/protocol';
import { LogVerificationError, RegistryClient } from '../src/index.js';

/**
 * A registry that is nothing but a transparency log signed with a throwaway key, answering a
 * follower's reads: the checkpoint and entry bundles of `log`, one agent's served profile, and
 * that agent's log proof in `proofTree` (a later tree, honest or forked).
 */
function fakeRegistry(options: {
  log: Uint8Array[];
  /** The entries each entry bundle width is served from (a fork serves other entries). */
  bundles: (width: number) => Uint8Array[];
  did: string;
  served: Record<string, unknown>;
  proofTree: Uint8Array[];
}): { client: RegistryClient; verifierKey: string } {
  const name = 'fake.example/log';
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyBytes = Uint8Array.of(
    1,
    ...Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url'),
  );
  const keyId = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), keyBytes]))
    .digest()
    .subarray(0, 4);
  const note = (leaves: Uint8Array[]): string => {
    const text = `${name}\n${leaves.length}\n${toBase64(merkleRoot(leaves.map(hashLeaf)))}\n`;
    const signature = sign(null, Buffer.from(text), privateKey);
    return `${text}\n\u2014 ${name} ${toBase64(Uint8Array.of(...keyId, ...signature))}\n`;
  };
  const bundle = (entries: Uint8Array[]): Uint8Array =>
    Uint8Array.from(entries.flatMap((entry) => [entry.length >> 8, entry.length & 0xff, ...entry]));
  const last = options.proofTree.length - 1;
  const proof = {
    leaf_index: last,
    tree_size: options.proofTree.length,
    inclusion_proof: inclusionPath(last, options.proofTree.map(hashLeaf)).map(toBase64),
    entry: toBase64(options.proofTree[last] as Uint8Array),
    checkpoint: note(options.proofTree),
  };
  const agentPath = `/api/agents/${encodeURIComponent(options.did)}`;
  const client = new RegistryClient({
    registry: 'https://fake.example',
    fetch: async (input) => {
      const path = new URL(String(input)).pathname;
      if (path === '/log/checkpoint') return new Response(note(options.log));
      const width = /^\/log\/tile\/entries\/000\.p\/(\d+)$/.exec(path)?.[1];
      if (width !== undefined) {
        return new Response(new Uint8Array(bundle(options.bundles(Number(width)).slice(0, Number(width)))));
      }
      if (path === agentPath) return Response.json(options.served);
      if (path === `${agentPath}/log-proof`) return Response.json(proof);
      return Response.json({ error: 'Not found', code: 'NOT_FOUND', details: path }, { status: 404 });
    },
  });
  return { client, verifierKey: `${name}+${Buffer.from(keyId).toString('hex')}+${toBase64(keyBytes)}` };
}

/** RFC 6962 section 2.1.1's PATH(m, D[n]), written out from the text. */
function inclusionPath(m: number, hashes: Uint8Array[]): Uint8Array[] {
  if (hashes.length <= 1) return [];
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return m < k
    ? [...inclusionPath(m, hashes.slice(0, k)), merkleRoot(hashes.slice(k))]
    : [...inclusionPath(m - k, hashes.slice(k)), merkleRoot(hashes.slice(0, k))];
}

const leaf = (fields: Omit<LogLeaf, 'v' | 'time'>): Uint8Array =>
  new TextEncoder().encode(canonicalJson({ v: 1, time: 1, ...fields }));

test('followLog leaves a changed agent pending only when its later leaf extends the verified tree', async () => {
  const did = 'did:web:fake.example:agent:x';
  const logged = { did, name: 'X', description: 'As logged' };
  const served = { did, name: 'X', description: 'As served now' };
  const first = leaf({
    seq: 1,
    did: 'did:web:fake.example:agent:a',
    op: 'register',
    profile_sha256: '0'.repeat(64),
  });
  const second = leaf({
    seq: 2,
    did: 'did:web:fake.example:agent:b',
    op: 'register',
    profile_sha256: '1'.repeat(64),
  });
  const registered = leaf({ seq: 3, did, op: 'register', profile_sha256: profileSha256(logged) });
  const updated = leaf({ seq: 4, did, op: 'update', profile_sha256: profileSha256(served) });
  const honest = [first, second, registered];
  const state = followStateOf([first, second].map(hashLeaf));

  // The served profile is logged later, in a tree that extends the verified one: pending, not a mismatch.
  const extended = fakeRegistry({
    log: honest,
    bundles: () => [...honest, updated],
    did,
    served,
    proofTree: [...honest, updated],
  });
  const caughtUp = await extended.client.followLog({ verifierKey: extended.verifierKey, state });
  assert.deepEqual(
    caughtUp.profiles.map((followed) => [followed.did, followed.profile]),
    [[did, null]],
  );

  // The same later leaf signed in a fork, a tree whose entry 2 is another one: refused.
  const rewritten = leaf({ seq: 3, did, op: 'register', profile_sha256: profileSha256(served) });
  const forkedTree = [first, second, rewritten, updated];
  const forked = fakeRegistry({
    log: honest,
    bundles: (width) => (width <= honest.length ? honest : forkedTree),
    did,
    served,
    proofTree: forkedTree,
  });
  await assert.rejects(
    forked.client.followLog({ verifierKey: forked.verifierKey, state }),
    (error: Error) => {
      assert.ok(error instanceof LogVerificationError, String(error));
      assert.match(error.message, /entry 2 was rewritten since it was verified/);
      return true;
    },
  );
});
