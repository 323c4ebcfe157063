import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { confirmOnCurve, parseEd25519KeyQuickly } from '../../src/modules/identity/ed25519-key.js';
import { parsePublicKey } from '@agent-registry/protocol';

const outcome = (parse: () => unknown): string => {
  try {
    parse();
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
};

const P = 2n ** 255n - 19n;
const encodeY = (y: bigint, sign = 0): string => {
  const bytes = Buffer.alloc(32);
  for (let index = 0; index < 32; index++) bytes[index] = Number((y >> BigInt(8 * index)) & 0xffn);
  bytes[31] = (bytes[31] as number) | (sign << 7);
  return bytes.toString('hex');
};

test('the eight small-order encodings are the torsion subgroup, each refused as weak', () => {
  // The torsion subgroup is cyclic of order 8: the multiples of one point of order 8 are all of it.
  const generator = ed25519.Point.fromHex(
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    false,
  );
  const torsion = new Set<string>();
  let point = ed25519.Point.ZERO;
  for (let multiple = 0; multiple < 8; multiple++) {
    torsion.add(point.toHex());
    assert.ok(point.isSmallOrder());
    point = point.add(generator);
  }
  assert.equal(torsion.size, 8);
  for (const hex of torsion) {
    assert.equal(
      outcome(() => parseEd25519KeyQuickly(hex)),
      'public_key is a small-order (weak) Ed25519 point',
    );
    assert.equal(
      outcome(() => parsePublicKey('ed25519', hex)),
      'public_key is a small-order (weak) Ed25519 point',
    );
  }
});

test('the quick check agrees with the full one on every key but those off the curve', () => {
  const keys = [
    ...Array.from({ length: 400 }, () => crypto.randomBytes(32).toString('hex')),
    ...Array.from({ length: 50 }, () =>
      Buffer.from(ed25519.getPublicKey(ed25519.utils.randomSecretKey())).toString('hex').toUpperCase(),
    ),
    encodeY(P),
    encodeY(P + 1n),
    encodeY(P + 5n, 1),
    encodeY(2n ** 255n - 1n),
    encodeY(1n, 1),
    encodeY(P - 1n, 1),
    'zz'.repeat(32),
    '0x' + '11'.repeat(31),
    'ab'.repeat(31),
  ];
  let offCurve = 0;
  for (const key of keys) {
    const full = outcome(() => parsePublicKey('ed25519', key));
    const quick = outcome(() => parseEd25519KeyQuickly(key));
    if (quick === 'accepted' && full !== 'accepted') {
      // Let through: an off-curve point, which confirmOnCurve reports as the full check does.
      assert.equal(full, 'public_key is not a valid Ed25519 point encoding', key);
      assert.equal(
        outcome(() => confirmOnCurve(parseEd25519KeyQuickly(key))),
        full,
      );
      offCurve++;
    } else {
      assert.equal(quick, full, key);
    }
  }
  assert.ok(offCurve > 100, `random keys off the curve: ${offCurve}`);
});
