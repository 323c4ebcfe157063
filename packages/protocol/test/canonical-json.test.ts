import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canonicalJson } from '../src/canonical-json.js';

/** Canonical JSON written out independently of the library: the rule of section 5.1. */
function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(referenceCanonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${referenceCanonicalJson(member)}`).join(',')}}`;
}

describe('canonical JSON (RFC 8785 library) is the rule of section 5.1', () => {
  const samples: unknown[] = [
    { b: 1, a: 2 },
    {
      key_type: 'ed25519',
      profile: {
        website: null,
        avatar: null,
        name: 'N',
        tags: [],
        capabilities: [{ type: 't', tags: ['z', 'a'] }],
      },
    },
    {
      nested: { z: { y: [3, { b: null, a: true }] }, a: [] },
      e: 'ünïcödé "quoted" \\ \n',
      n: -0.5,
      i: 1700000000000,
    },
    [{ b: 2, a: 1 }, 'x', null, false],
    { Z: 1, a: 2, _: 3, '0': 4 },
    {
      input_schema: {
        type: 'object',
        required: ['text'],
        properties: { text: { type: 'string', maxLength: 10 } },
      },
    },
  ];

  for (const [index, sample] of samples.entries()) {
    test(`sample ${index}: keys sorted at every level, no whitespace, arrays in order, null kept`, () => {
      const text = canonicalJson(sample);
      assert.equal(text, referenceCanonicalJson(sample));
      assert.doesNotMatch(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'), /\s/);
      assert.deepEqual(JSON.parse(text), sample);
    });
  }

  test('exact text of a registration message', () => {
    const text = canonicalJson({
      timestamp: 1700000000000,
      purpose: 'registration',
      public_key: 'ab',
      profile: {
        website: null,
        tags: [],
        name: 'N',
        description: null,
        capabilities: [{ type: 'coding' }],
        avatar: null,
      },
      key_type: 'ed25519',
    });
    assert.equal(
      text,
      '{"key_type":"ed25519","profile":{"avatar":null,"capabilities":[{"type":"coding"}],"description":null,"name":"N","tags":[],"website":null},"public_key":"ab","purpose":"registration","timestamp":1700000000000}',
    );
  });
});
