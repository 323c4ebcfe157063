import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { leafData } from '../../src/modules/transparency-log/leaf.js';
import { MerkleTree, leafHash } from '../../src/modules/transparency-log/merkle.js';
import { encodeTileIndex, parseTilePath, tileWidthAt } from '../../src/modules/transparency-log/tiles.js';
import {
  hashLeaf,
  merkleRoot,
  verifyConsistency,
  verifyInclusion,
  verifyNote,
} from '../support/tlog-verifier.js';

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

function treeOf(leaves: Uint8Array[]): MerkleTree {
  const tree = new MerkleTree();
  for (const leaf of leaves) tree.append(leafHash(leaf));
  return tree;
}

describe('transparency log Merkle tree (RFC 6962) against an independent verifier', () => {
  test('the independent verifier reproduces the RFC 6962 reference roots, and so does the tree', () => {
    assert.equal(hex(merkleRoot([])), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const tree = new MerkleTree();
    VECTOR_LEAVES.forEach((leaf, i) => {
      tree.append(leafHash(leaf));
      assert.equal(hex(merkleRoot(VECTOR_LEAVES.slice(0, i + 1))), VECTOR_ROOTS[i], `verifier root ${i + 1}`);
      for (let size = 1; size <= i + 1; size += 1) {
        assert.equal(hex(tree.root(size)), VECTOR_ROOTS[size - 1], `tree root ${size} after ${i + 1} leaves`);
      }
    });
  });

  test('every inclusion and consistency proof up to 70 leaves verifies, and a wrong one does not', () => {
    const leaves = Array.from({ length: 70 }, (_, i) => Uint8Array.from(Buffer.from(`leaf ${i}`)));
    const tree = treeOf(leaves);
    for (let size = 1; size <= leaves.length; size += 1) {
      const root = merkleRoot(leaves.slice(0, size));
      assert.equal(hex(tree.root(size)), hex(root));
      for (let index = 0; index < size; index += 1) {
        const proof = tree.inclusionProof(index, size);
        assert.ok(
          verifyInclusion(index, size, hashLeaf(leaves[index]!), proof, root),
          `inclusion ${index}/${size}`,
        );
        const wrong = index === 0 ? 1 : 0;
        if (wrong < size) assert.ok(!verifyInclusion(wrong, size, hashLeaf(leaves[index]!), proof, root));
      }
      for (let first = 1; first < size; first += 1) {
        const proof = tree.consistencyProof(first, size);
        const firstRoot = merkleRoot(leaves.slice(0, first));
        assert.ok(verifyConsistency(first, size, firstRoot, root, proof), `consistency ${first}/${size}`);
        const forked = merkleRoot([...leaves.slice(0, first - 1), Uint8Array.from([9])]);
        assert.ok(!verifyConsistency(first, size, forked, root, proof), `fork ${first}/${size}`);
      }
    }
  });

  test('a level-1 tile hash is the root of a full level-0 tile, as tlog-tiles defines it', () => {
    const leaves = Array.from({ length: 600 }, (_, i) => Uint8Array.from(Buffer.from(`entry ${i}`)));
    const tree = treeOf(leaves);
    for (const index of [0, 1]) {
      const expected = merkleRoot(leaves.slice(index * 256, (index + 1) * 256));
      assert.equal(
        hex(tree.completeSubtree(8, index) ?? new Uint8Array()),
        hex(expected),
        `tile 1 hash ${index}`,
      );
    }
    assert.equal(tree.completeSubtree(8, 2), undefined);
    assert.equal(hex(tree.completeSubtree(0, 599) ?? new Uint8Array()), hex(hashLeaf(leaves[599]!)));
  });

  test('tile paths parse and encode as tlog-tiles writes them, and widths follow the tree size', () => {
    assert.equal(encodeTileIndex(1234067), 'x001/x234/067');
    assert.equal(encodeTileIndex(5), '005');
    assert.deepEqual(parseTilePath('0/x001/x234/067'), { level: 0, index: 1234067, width: 256 });
    assert.deepEqual(parseTilePath('2/000.p/17'), { level: 2, index: 0, width: 17 });
    // One encoding per index: a leading x000 element names the same tile a second time.
    assert.equal(parseTilePath('0/x000/001'), undefined);
    assert.equal(parseTilePath('entries/x000/x001/000'), undefined);
    assert.deepEqual(parseTilePath('entries/001.p/5'), { level: undefined, index: 1, width: 5 });
    for (const bad of [
      '',
      '0',
      '64/000',
      '01/000',
      '0/1',
      '0/x000',
      '0/000/001',
      '0/000.p/0',
      '0/000.p/256',
      '0/000.p/07',
      'x/000',
      '0/000.p',
    ]) {
      assert.equal(parseTilePath(bad), undefined, bad);
    }
    // The tlog-tiles example: a tree of 70,000 leaves.
    assert.equal(tileWidthAt(0, 273, 70_000), 112);
    assert.equal(tileWidthAt(0, 272, 70_000), 256);
    assert.equal(tileWidthAt(1, 0, 70_000), 256);
    assert.equal(tileWidthAt(1, 1, 70_000), 17);
    assert.equal(tileWidthAt(2, 0, 70_000), 1);
    assert.equal(tileWidthAt(0, 274, 70_000), 0);
  });

  test('the verifier checks the signed-note specification example', () => {
    const note =
      'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
    const key = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
    assert.equal(verifyNote(note, key), 'This is an example message.\n');
    assert.throws(
      () => verifyNote(note.replace('example message', 'exemplary message'), key),
      /does not verify/,
    );
  });

  test('the worked leaf example of docs/transparency-log.md, byte for byte', () => {
    const record = {
      did: 'did:web:registry.example:agents:heron',
      name: 'Heron',
      description: 'Summarises papers',
      avatar: null,
      website: null,
      public_key: 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
      key_type: 'ed25519',
      chain_id: null,
      capabilities: '[]',
      tags: '["papers"]',
      status: 'active',
      invocation_enabled: 0,
      delivery_mode: 'none',
      average_rating: 0,
      reputation_score: 0,
      total_reviews: 0,
      created_at: 1767225600000,
      updated_at: 1767225600000,
    };
    const data = leafData(7, 'register', JSON.stringify(record), 'https://registry.example');
    assert.equal(
      data.toString('utf8'),
      '{"did":"did:web:registry.example:agents:heron","op":"register","profile_sha256":"059b140c2732dbab173b4867ecc3931a5c415752f685b2d4e40c7b66eed3bff2","seq":7,"time":1767225600000,"v":1}',
    );
    assert.equal(data.length, 182);
    assert.equal(hex(hashLeaf(data)), 'dc71f98a13b3f4f0218411116b03959fae8578fc090d194d8ff3f5795ae312cf');
  });
});
