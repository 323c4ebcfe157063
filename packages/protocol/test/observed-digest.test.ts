import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { capabilitiesDigest, toolsDigest } from '../src/observed-digest.js';
import { decodeEventLeaf } from '../src/log-events.js';

/** RFC 8785 for the values below (strings, integers, booleans, null), written independently. */
function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  const members = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${jcs(member)}`).join(',')}}`;
}

const independent = (list: Record<string, unknown>[], key: string): string =>
  'sha256:' +
  createHash('sha256')
    .update(jcs([...list].sort((a, b) => (String(a[key]) < String(b[key]) ? -1 : 1))), 'utf8')
    .digest('hex');

const tools = [
  {
    name: 'zeta',
    description: 'Ünïcödé "quoted"',
    inputSchema: { type: 'object', properties: { b: { type: 'string' }, a: { type: 'integer' } } },
  },
  { name: 'alpha', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true }, _meta: { x: 1 } },
  { name: 'Beta', inputSchema: { type: 'object', required: ['q'] } },
];

describe('tools_digest and capabilities_digest', () => {
  test('equal the SHA-256 of the canonical JSON of the list sorted by name, computed independently', () => {
    assert.equal(toolsDigest(tools), independent(tools, 'name'));
    assert.match(toolsDigest(tools), /^sha256:[0-9a-f]{64}$/);
  });

  test('do not depend on the order the server listed the tools in, but on every member of each', () => {
    assert.equal(toolsDigest([...tools].reverse()), toolsDigest(tools));
    const changed = tools.map((tool) => (tool.name === 'alpha' ? { ...tool, description: 'new' } : tool));
    assert.notEqual(toolsDigest(changed), toolsDigest(tools));
  });

  test('an empty list has the digest of []', () => {
    assert.equal(toolsDigest([]), 'sha256:' + createHash('sha256').update('[]').digest('hex'));
  });

  test('capabilities are sorted by type', () => {
    const capabilities = [{ type: 'translate', description: null }, { type: 'ocr' }];
    assert.equal(capabilitiesDigest(capabilities), independent(capabilities, 'type'));
  });
});

describe('entry.observed leaves', () => {
  const leaf = {
    v: 1,
    seq: 7,
    op: 'entry.observed',
    subject: 'mcp:https://r.example:io.x/y',
    time: 1,
    status: 'answers',
    tools_digest: toolsDigest(tools),
    tools_count: 3,
  };
  test('a well-formed one decodes', () => {
    assert.equal(decodeEventLeaf(leaf, 'leaf 7').op, 'entry.observed');
    assert.equal(
      decodeEventLeaf({ ...leaf, status: 'unreachable', tools_digest: null, tools_count: null }, 'x').status,
      'unreachable',
    );
  });
  test('a malformed one is refused, saying why', () => {
    assert.throws(() => decodeEventLeaf({ ...leaf, status: 'up' }, 'leaf 7'), /status is not one of/);
    assert.throws(() => decodeEventLeaf({ ...leaf, tools_digest: 'sha256:XY' }, 'leaf 7'), /tools_digest/);
    assert.throws(() => decodeEventLeaf({ ...leaf, tools_count: null }, 'leaf 7'), /both null/);
  });
});
