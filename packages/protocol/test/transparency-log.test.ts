import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import {
  EMPTY_FOLLOW_STATE,
  LogVerificationError,
  appendToRange,
  canonicalJson,
  checkFollowState,
  compactRange,
  decodeLeaf,
  entryBundlePath,
  extendLog,
  extendLogInSteps,
  followStateFromStored,
  followStateOf,
  hashChildren,
  hashLeaf,
  hashTilePath,
  merkleRoot,
  profileSha256,
  rangeRoot,
  splitEntryBundle,
  storedFollowState,
  toBase64,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyLogProof,
  type LogFollowState,
} from '../src/index.js';

// The inputs and roots of the RFC 6962 reference implementation's Merkle tests (certificate-transparency).
const VECTOR_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((hex) => Uint8Array.from(Buffer.from(hex, 'hex')));
const VECTOR_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

// RFC 6962 section 2.1.1 and 2.1.2 (PATH and SUBPROOF) written out from the text, to produce proofs.
const split = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
function path(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k
    ? [...path(m, leaves.slice(0, k)), merkleRoot(leaves.slice(k))]
    : [...path(m - k, leaves.slice(k)), merkleRoot(leaves.slice(0, k))];
}
function subproof(m: number, leaves: Uint8Array[], complete: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [merkleRoot(leaves)];
  const k = split(n);
  return m <= k
    ? [...subproof(m, leaves.slice(0, k), complete), merkleRoot(leaves.slice(k))]
    : [...subproof(m - k, leaves.slice(k), false), merkleRoot(leaves.slice(0, k))];
}

const name = 'registry.example/log';
const secret = sha256(new TextEncoder().encode('a fixed test key'));
const keyBytes = Uint8Array.of(1, ...ed25519.getPublicKey(secret));
const keyId = sha256(Uint8Array.of(...new TextEncoder().encode(`${name}\n`), ...keyBytes)).subarray(0, 4);
const verifierKey = `${name}+${hex(keyId)}+${toBase64(keyBytes)}`;
function sign(size: number, root: Uint8Array, origin = name): string {
  const text = `${origin}\n${size}\n${toBase64(root)}\n`;
  const signature = ed25519.sign(new TextEncoder().encode(text), secret);
  return `${text}\n\u2014 ${name} ${toBase64(Uint8Array.of(...keyId, ...signature))}\n`;
}
const bundle = (entries: Uint8Array[]): Uint8Array =>
  Uint8Array.from(entries.flatMap((entry) => [entry.length >> 8, entry.length & 0xff, ...entry]));
const leafData = (i: number): Uint8Array =>
  new TextEncoder().encode(
    canonicalJson({
      v: 1,
      seq: i + 1,
      did: `did:key:z${i}`,
      op: 'register',
      time: 1,
      profile_sha256: '0'.repeat(64),
    }),
  );

describe('transparency log verification (RFC 6962, C2SP signed-note and tlog-tiles)', () => {
  test('reproduces the RFC 6962 reference roots', () => {
    assert.equal(hex(merkleRoot([])), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    VECTOR_LEAVES.forEach((_, i) => {
      assert.equal(hex(merkleRoot(VECTOR_LEAVES.slice(0, i + 1).map(hashLeaf))), VECTOR_ROOTS[i]);
    });
  });

  test('a compact range folds to the RFC 6962 root at every size, one leaf at a time', () => {
    const vectorRange: Uint8Array[] = [];
    assert.equal(hex(rangeRoot(vectorRange)), hex(merkleRoot([])));
    VECTOR_LEAVES.forEach((leaf, i) => {
      appendToRange(vectorRange, i, hashLeaf(leaf));
      assert.equal(hex(rangeRoot(vectorRange)), VECTOR_ROOTS[i]);
    });
    const hashes = Array.from({ length: 600 }, (_, i) => hashLeaf(new TextEncoder().encode(`leaf ${i}`)));
    const range: Uint8Array[] = [];
    for (let size = 0; size <= hashes.length; size += 1) {
      assert.equal(hex(rangeRoot(range)), hex(merkleRoot(hashes.slice(0, size))), `size ${size}`);
      // One subtree per bit set in the size, each the root of its complete subtree.
      assert.equal(range.length, size.toString(2).replace(/0/g, '').length, `subtrees of size ${size}`);
      if (size < hashes.length) appendToRange(range, size, hashes[size]!);
    }
    assert.deepEqual(compactRange(hashes), range);
    assert.deepEqual(
      compactRange(hashes.slice(0, 300)).map(hex),
      [
        merkleRoot(hashes.slice(0, 256)),
        merkleRoot(hashes.slice(256, 288)),
        merkleRoot(hashes.slice(288, 296)),
        merkleRoot(hashes.slice(296, 300)),
      ].map(hex),
    );
  });

  test('a follow state checks itself against its root, and survives storing as JSON', () => {
    const hashes = Array.from({ length: 300 }, (_, i) => hashLeaf(new TextEncoder().encode(`leaf ${i}`)));
    const state = followStateOf(hashes);
    assert.equal(state.root, toBase64(merkleRoot(hashes)));
    assert.equal(state.partialBundle.length, 44);
    checkFollowState(state);
    const stored = JSON.parse(JSON.stringify(storedFollowState(state))) as unknown;
    assert.deepEqual(followStateFromStored(stored), state);
    assert.throws(
      () => followStateFromStored({ size: 3, root: 'x', leaf_hashes: [] }),
      /not one of this release/,
    );
    assert.throws(
      () => checkFollowState({ ...state, range: [hashes[0]!, ...state.range.slice(1)] }),
      /does not hash to its own root/,
    );
    // The partial bundle's leaves must be the ones the range's smallest subtrees were made of.
    assert.throws(
      () => checkFollowState({ ...state, partialBundle: [hashes[0]!, ...state.partialBundle.slice(1)] }),
      /does not hash to its own root/,
    );
    assert.throws(() => checkFollowState({ ...state, size: 301 }), /for 301 entries/);
    const earlierRelease = { size: 300, root: state.root, leafHashes: hashes } as unknown as LogFollowState;
    assert.throws(() => checkFollowState(earlierRelease), /rebuild it with followStateOf\(leafHashes\)/);
  });

  test('every inclusion and consistency proof up to 40 leaves verifies, and a tampered one does not', () => {
    const hashes = Array.from({ length: 40 }, (_, i) => hashLeaf(new TextEncoder().encode(`leaf ${i}`)));
    for (let size = 1; size <= hashes.length; size += 1) {
      const tree = hashes.slice(0, size);
      const root = merkleRoot(tree);
      for (let m = 0; m < size; m += 1) {
        const proof = path(m, tree);
        assert.ok(verifyInclusion(m, size, tree[m]!, proof, root), `inclusion ${m} in ${size}`);
        assert.ok(!verifyInclusion(m, size, hashLeaf(Uint8Array.of(9)), proof, root));
        if (proof.length > 0) {
          assert.ok(
            !verifyInclusion(
              m,
              size,
              tree[m]!,
              [hashChildren(proof[0]!, proof[0]!), ...proof.slice(1)],
              root,
            ),
          );
        }
      }
      for (let first = 1; first <= size; first += 1) {
        const proof = first === size ? [] : subproof(first, tree, true);
        const firstRoot = merkleRoot(hashes.slice(0, first));
        assert.ok(verifyConsistency(first, size, proof, firstRoot, root), `consistency ${first} to ${size}`);
        if (first < size) {
          assert.ok(!verifyConsistency(first, size, proof, hashLeaf(Uint8Array.of(1)), root));
          assert.ok(!verifyConsistency(first, size, proof, firstRoot, hashLeaf(Uint8Array.of(1))));
        }
      }
    }
  });

  test('a checkpoint verifies with its key only, and a changed note or key is refused by name', () => {
    const root = merkleRoot(VECTOR_LEAVES.map(hashLeaf));
    const note = sign(8, root);
    assert.deepEqual(verifyCheckpoint(note, verifierKey), { origin: name, size: 8, root });
    assert.throws(() => verifyCheckpoint(note.replace('\n8\n', '\n9\n'), verifierKey), /does not verify/);
    assert.throws(
      () => verifyCheckpoint(note, verifierKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')),
      /key ID/,
    );
    assert.throws(() => verifyCheckpoint(note, 'someone.else+00000000+AQ=='), LogVerificationError);
    assert.throws(() => verifyCheckpoint(`${name}\n8\n`, verifierKey), /no signature/);
  });

  test('a malformed signature, entry or proof hash is a LogVerificationError naming it, never a RangeError', () => {
    const leaves = [0, 1, 2].map((i) => hashLeaf(leafData(i)));
    const root = merkleRoot(leaves);
    const note = sign(3, root);
    const signatureLine = (bytes: Uint8Array): string =>
      note.replace(/\u2014 \S+ \S+\n$/, `\u2014 ${name} ${toBase64(bytes)}\n`);
    const refused = (run: () => unknown, message: RegExp) =>
      assert.throws(
        run,
        (error: unknown) => error instanceof LogVerificationError && message.test(error.message),
      );
    // The right key ID, then too few signature bytes (@noble throws a RangeError on them).
    refused(
      () => verifyCheckpoint(signatureLine(Uint8Array.of(...keyId, 1, 2, 3)), verifierKey),
      /signature by registry\.example\/log is 3 bytes after its key ID, not 64/,
    );
    refused(
      () =>
        verifyCheckpoint(
          signatureLine(Uint8Array.of(...keyId, ...new Uint8Array(64).fill(0xff))),
          verifierKey,
        ),
      /does not verify/,
    );

    const proof = {
      leaf_index: 1,
      tree_size: 3,
      inclusion_proof: path(1, leaves).map(toBase64),
      entry: toBase64(leafData(1)),
      checkpoint: note,
    };
    assert.equal(verifyLogProof(proof, verifierKey).leaf.did, 'did:key:z1');
    refused(
      () => verifyLogProof({ ...proof, entry: 'not base64!' }, verifierKey),
      /the proof's entry is not base64/,
    );
    refused(
      () =>
        verifyLogProof(
          { ...proof, inclusion_proof: ['%%%', ...proof.inclusion_proof.slice(1)] },
          verifierKey,
        ),
      /inclusion proof hash 0 is not base64/,
    );
    const short = toBase64(new Uint8Array(31));
    refused(
      () => verifyLogProof({ ...proof, inclusion_proof: [proof.inclusion_proof[0]!, short] }, verifierKey),
      /inclusion proof hash 1 is 31 bytes, not a 32-byte hash/,
    );
    // The boolean checks answer false for a hash of another length instead of hashing it.
    const path1 = path(1, leaves);
    assert.equal(verifyInclusion(1, 3, leaves[1]!, path1, root), true);
    assert.equal(verifyInclusion(1, 3, leaves[1]!, [path1[0]!, path1[1]!.subarray(1)], root), false);
    assert.equal(verifyConsistency(2, 3, [new Uint8Array(31)], merkleRoot(leaves.slice(0, 2)), root), false);
  });

  test('tile paths, bundles and leaves decode as tlog-tiles and the leaf format say', () => {
    assert.equal(entryBundlePath(1234067, 256), 'tile/entries/x001/x234/067');
    assert.equal(entryBundlePath(0, 3), 'tile/entries/000.p/3');
    assert.equal(hashTilePath(1, 5, 17), 'tile/1/005.p/17');
    const entries = [leafData(0), leafData(1)];
    assert.deepEqual(splitEntryBundle(bundle(entries)), entries);
    assert.throws(() => splitEntryBundle(bundle(entries).subarray(0, 10)), /ends inside an entry/);
    assert.equal(decodeLeaf(leafData(4)).did, 'did:key:z4');
    assert.throws(() => decodeLeaf(new TextEncoder().encode('{"v":1}'), 7), /log entry 7 is not a leaf/);
    const profile = {
      did: 'did:key:z1',
      name: 'A',
      service_record: { up: true },
      availability: { status: 'online' },
      provenance: { kind: 'registered', home_registry: 'https://registry.example' },
    };
    assert.equal(
      profileSha256(profile),
      hex(sha256(new TextEncoder().encode('{"did":"did:key:z1","name":"A"}'))),
    );
  });

  test('extendLog follows a growing log and names a fork, a shrink and a rewritten entry', async () => {
    let data = Array.from({ length: 300 }, (_, i) => leafData(i));
    const source = (size: number, note?: string) => ({
      checkpoint: async () => note ?? sign(size, merkleRoot(data.slice(0, size).map(hashLeaf))),
      entryBundle: async (index: number, width: number) =>
        bundle(data.slice(index * 256, index * 256 + width)),
    });
    const first = await extendLog(source(200), verifierKey);
    assert.equal(first.entries.length, 200);
    assert.equal(first.entries[199]?.seq, 200);
    const second = await extendLog(source(300), verifierKey, first.state);
    assert.deepEqual(
      second.entries.map((leaf) => leaf.seq),
      Array.from({ length: 100 }, (_, i) => 201 + i),
    );
    const forked = sign(300, hashLeaf(Uint8Array.of(1)));
    await assert.rejects(
      extendLog(source(300, forked), verifierKey, second.state),
      /forked checkpoint.*size 300/,
    );
    await assert.rejects(extendLog(source(250), verifierKey, second.state), /shrank from 300 entries/);
    const kept: LogFollowState = first.state;
    data = data.map((entry, i) => (i === 199 ? leafData(1000) : entry));
    await assert.rejects(extendLog(source(300), verifierKey, kept), /entry 199 was rewritten/);
    // A rewound log that grew again past a full bundle: the old bundle is read again to name the fork.
    data = Array.from({ length: 300 }, (_, i) => leafData(i));
    const full = await extendLog(source(256), verifierKey);
    data = data.map((entry, i) => (i === 10 ? leafData(2000) : entry));
    await assert.rejects(
      extendLog(source(300), verifierKey, full.state),
      /forked log: an entry among 0 to 255, verified before, is another one now, so the tree of size 256 has two roots/,
    );
    // An entry of the partial bundle is checked by the re-read; a fork deeper down is named by the
    // subtree of the verified compact range it falls in.
    data = Array.from({ length: 800 }, (_, i) => leafData(i));
    const odd = await extendLog(source(513), verifierKey);
    data = data.map((entry, i) => (i === 512 ? leafData(3000) : entry));
    await assert.rejects(extendLog(source(600), verifierKey, odd.state), /entry 512 was rewritten/);
    const grown = { ...odd.state, partialBundle: [] as Uint8Array[] };
    await assert.rejects(extendLog(source(600), verifierKey, grown), /verified state holds/);
    data = data.map((entry, i) => (i === 512 ? leafData(512) : i === 300 ? leafData(3001) : entry));
    await assert.rejects(
      extendLog(source(600), verifierKey, odd.state),
      /forked log: an entry among 0 to 511, verified before, .* size 513/,
    );
    data = Array.from({ length: 800 }, (_, i) => leafData(i));
    const twoSubtrees = await extendLog(source(768), verifierKey);
    data = data.map((entry, i) => (i === 600 ? leafData(3002) : entry));
    await assert.rejects(
      extendLog(source(800), verifierKey, twoSubtrees.state),
      /forked log: an entry among 512 to 767, verified before/,
    );
    // A rewound log that serves an early bundle short (entries dropped) is named a fork, not a crash.
    const afterDrop = {
      ...source(800),
      entryBundle: async (index: number, width: number) =>
        bundle(index === 0 ? [] : data.slice(index * 256, index * 256 + width)),
    };
    await assert.rejects(
      extendLog(afterDrop, verifierKey, twoSubtrees.state),
      /forked log: an entry among 0 to 511, verified before, is another one now/,
    );
    // A follow state rebuilt from all its leaf hashes follows on exactly as the one extendLog left.
    data = Array.from({ length: 800 }, (_, i) => leafData(i));
    const rebuilt = followStateOf(data.slice(0, 513).map(hashLeaf));
    assert.deepEqual(rebuilt, odd.state);
    assert.equal((await extendLog(source(600), verifierKey, rebuilt)).entries.length, 87);
    // Nothing new: the partial bundle is read again and checked, no entry is returned.
    const same = await extendLog(source(513), verifierKey, odd.state);
    assert.equal(same.entries.length, 0);
    assert.deepEqual(same.state, odd.state);
    // A server whose entries do not hash to the root it signs is caught before any entry is returned.
    await assert.rejects(
      extendLog({ ...source(300), checkpoint: async () => sign(300, second.state.range[0]!) }, verifierKey),
      /do not hash to the checkpoint's root/,
    );
  });

  test('extendLogInSteps proves each bundle against the signed root through the hash tiles, in bounded steps', async () => {
    const data = Array.from({ length: 256 * 5 + 37 }, (_, i) => leafData(i));
    const leaves = data.map(hashLeaf);
    const size = data.length;
    // Hash tile `index` of `level`: the roots of its 256 ** level-leaf subtrees, as tlog-tiles serves them.
    const tileOf = (level: number, index: number, width: number): Uint8Array => {
      const span = 256 ** level;
      const hashes = Array.from({ length: width }, (_, i) =>
        merkleRoot(leaves, (index * 256 + i) * span, span),
      );
      return Uint8Array.from(hashes.flatMap((hash) => [...hash]));
    };
    const tileReads: string[] = [];
    const source = (
      overrides: { tile?: (level: number, index: number, width: number) => Uint8Array } = {},
    ) => ({
      checkpoint: async () => sign(size, merkleRoot(leaves)),
      entryBundle: async (index: number, width: number) =>
        bundle(data.slice(index * 256, index * 256 + width)),
      hashTile: async (level: number, index: number, width: number) => {
        tileReads.push(`${level}/${index}/${width}`);
        return (overrides.tile ?? tileOf)(level, index, width);
      },
    });
    const steps: number[] = [];
    const onStep = async (step: { state: LogFollowState; entries: unknown[] }) => {
      checkFollowState(step.state);
      steps.push(step.entries.length);
    };
    const bounds = { maxEntries: 512, maxBytes: 1 << 20 };
    const first = await extendLogInSteps(source(), verifierKey, EMPTY_FOLLOW_STATE, bounds, onStep);
    assert.equal(first.stoppedBy, 'entries');
    assert.equal(first.state.size, 512);
    assert.deepEqual(steps, [256, 256]);
    assert.ok(tileReads.length > 0, 'a prefix is proved through the hash tiles');
    // Resumed from the stored state: the rest, the last (partial) bundle proved by the root itself.
    const rest = await extendLogInSteps(
      source(),
      verifierKey,
      first.state,
      { ...bounds, maxEntries: 1e9 },
      onStep,
    );
    assert.equal(rest.stoppedBy, undefined);
    assert.deepEqual(steps, [256, 256, 256, 256, 256, 37]);
    assert.deepEqual(rest.state, (await extendLog(source(), verifierKey)).state);
    // The byte bound and the signal stop it between bundles.
    const byBytes = await extendLogInSteps(
      source(),
      verifierKey,
      EMPTY_FOLLOW_STATE,
      { maxEntries: 1e9, maxBytes: 1 },
      onStep,
    );
    assert.equal(byBytes.stoppedBy, 'bytes');
    assert.equal(byBytes.state.size, 256);
    const aborted = await extendLogInSteps(
      source(),
      verifierKey,
      EMPTY_FOLLOW_STATE,
      { ...bounds, signal: AbortSignal.abort() },
      onStep,
    );
    assert.deepEqual([aborted.stoppedBy, aborted.state.size], ['signal', 0]);

    // Hash tiles that do not lead to the signed root prove nothing: refused before the bundle is handed over.
    steps.length = 0;
    await assert.rejects(
      extendLogInSteps(
        source({ tile: (l, i, w) => new Uint8Array(w * 32) }),
        verifierKey,
        EMPTY_FOLLOW_STATE,
        bounds,
        onStep,
      ),
      /entry bundle 0 is not part of the checkpoint's tree of size 1317/,
    );
    await assert.rejects(
      extendLogInSteps(
        source({ tile: (l, i, w) => tileOf(l, i, w).subarray(32) }),
        verifierKey,
        EMPTY_FOLLOW_STATE,
        bounds,
        onStep,
      ),
      /hash tile \d+\/\d+ of width \d+ is \d+ bytes/,
    );
    // A bundle holding one entry more than its width is refused as it is split.
    await assert.rejects(
      extendLogInSteps(
        { ...source(), entryBundle: async () => bundle(data.slice(0, 257)) },
        verifierKey,
        EMPTY_FOLLOW_STATE,
        bounds,
        onStep,
      ),
      /holds more than the 256 entries its width names/,
    );
    assert.deepEqual(steps, []);
  });

  test('a checkpoint claiming 25.6 million entries is followed one proved bundle at a time', async () => {
    // A log of one leaf repeated: every subtree of a height has one hash, so its tiles are cheap to serve.
    const leaf = leafData(0);
    const size = 25_600_000 + 5;
    const subtree = [hashLeaf(leaf)];
    for (let height = 1; height <= 25; height += 1)
      subtree.push(hashChildren(subtree[height - 1]!, subtree[height - 1]!));
    const roots = new Map<number, Uint8Array>();
    const mth = (n: number): Uint8Array => {
      if ((n & (n - 1)) === 0) return subtree[Math.log2(n)]!;
      const known = roots.get(n);
      if (known !== undefined) return known;
      const k = split(n);
      const root = hashChildren(mth(k), mth(n - k));
      roots.set(n, root);
      return root;
    };
    let garbage = false;
    const source = {
      checkpoint: async () => sign(size, mth(size)),
      entryBundle: async (_index: number, width: number) =>
        garbage ? new Uint8Array(1 << 20).fill(7) : bundle(Array.from({ length: width }, () => leaf)),
      hashTile: async (level: number, _index: number, width: number) =>
        Uint8Array.from(Array.from({ length: width }, () => [...subtree[level * 8]!]).flat()),
    };
    const steps: number[] = [];
    const done = await extendLogInSteps(
      source,
      verifierKey,
      EMPTY_FOLLOW_STATE,
      { maxEntries: 1024, maxBytes: 1 << 30 },
      async (step) => {
        steps.push(step.state.size);
      },
    );
    assert.deepEqual(steps, [256, 512, 768, 1024]);
    assert.deepEqual([done.stoppedBy, done.checkpointSize], ['entries', size]);
    garbage = true;
    await assert.rejects(
      extendLogInSteps(source, verifierKey, done.state, { maxEntries: 1024, maxBytes: 1 << 30 }, async () => {
        assert.fail('no garbage bundle is handed over');
      }),
      LogVerificationError,
    );
  });
});
