import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomAgentId } from '../../src/modules/identity/agent-id.js';

test('agent ids are 32 lower-case hex characters and never repeat, across refills of the random pool', () => {
  const ids = Array.from({ length: 2000 }, () => randomAgentId());
  for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
  assert.equal(new Set(ids).size, ids.length);
});
