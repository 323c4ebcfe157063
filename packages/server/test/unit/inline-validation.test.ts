import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  INLINE_VALIDATION,
  validatesInBoundedTime,
} from '../../src/modules/capabilities/inline-validation.js';

test('small schemas without recursion or pairwise checks are bounded', () => {
  assert.ok(validatesInBoundedTime({ type: 'object', properties: { text: { type: 'string' } } }));
  assert.ok(validatesInBoundedTime({ anyOf: [{ type: 'string', pattern: '^a+$' }, { enum: [1, 2, 3] }] }));
  assert.ok(validatesInBoundedTime(true));
});

test('a reference, uniqueItems or unevaluated* anywhere sends the schema to a worker', () => {
  for (const keyword of ['$ref', '$dynamicRef', '$recursiveRef']) {
    assert.equal(validatesInBoundedTime({ items: { [keyword]: '#' } }), false, keyword);
  }
  assert.equal(validatesInBoundedTime({ properties: { list: { uniqueItems: true } } }), false);
  assert.equal(validatesInBoundedTime({ allOf: [{ unevaluatedProperties: false }] }), false);
  assert.equal(validatesInBoundedTime({ items: [{ unevaluatedItems: false }] }), false);
});

test('the limit counts every JSON value of the schema, enum members included', () => {
  // An object holding an enum array of n members is 2 + n values.
  const withEnum = (members: number) => ({ enum: Array.from({ length: members }, (_, i) => i) });
  const limit = INLINE_VALIDATION.schemaMaxValues;
  assert.ok(validatesInBoundedTime(withEnum(limit - 2)));
  assert.equal(validatesInBoundedTime(withEnum(limit - 1)), false);
  const nested = { properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, {}])) };
  assert.equal(validatesInBoundedTime(nested), true, '2 + 20 values');
  assert.equal(validatesInBoundedTime({ allOf: [nested, nested] }), false, 'over the limit when repeated');
});
