import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AgentKey, RegistryClient, RegistryError } from '@agent-registry/sdk';
import { parseJson, runCli, startRegistry, tempHome, type RunningRegistry } from './harness.js';

/**
 * `validate` and the registry must agree: what validate accepts registers, and what it refuses the
 * registry refuses too (sent here through the SDK, since `register` would stop it before sending).
 */
const CASES: { name: string; profile: unknown; valid: boolean }[] = [
  { name: 'minimal', profile: { name: 'A', capabilities: [{ type: 'x' }] }, valid: true },
  {
    name: 'full, at every limit',
    profile: {
      name: 'n'.repeat(100),
      description: 'd'.repeat(1000),
      capabilities: Array.from({ length: 50 }, (_, index) => ({
        type: `t${index}`.padEnd(100, 'x'),
        description: 'c'.repeat(1000),
        tags: Array.from({ length: 20 }, () => 'g'.repeat(50)),
        input_schema: { type: 'object', properties: { text: { type: 'string', pattern: '^[a-z]+$' } } },
      })),
      tags: Array.from({ length: 20 }, () => 'g'.repeat(50)),
      avatar: 'https://example.com/a.png',
      website: 'http://example.com',
    },
    valid: true,
  },
  { name: 'empty name', profile: { name: '', capabilities: [{ type: 'x' }] }, valid: false },
  { name: 'name too long', profile: { name: 'n'.repeat(101), capabilities: [{ type: 'x' }] }, valid: false },
  { name: 'no capabilities', profile: { name: 'A', capabilities: [] }, valid: false },
  {
    name: '51 capabilities',
    profile: { name: 'A', capabilities: Array.from({ length: 51 }, () => ({ type: 'x' })) },
    valid: false,
  },
  {
    name: 'capability without type',
    profile: { name: 'A', capabilities: [{ description: 'x' }] },
    valid: false,
  },
  {
    name: '21 tags',
    profile: { name: 'A', capabilities: [{ type: 'x' }], tags: Array.from({ length: 21 }, () => 't') },
    valid: false,
  },
  {
    name: 'tag too long',
    profile: { name: 'A', capabilities: [{ type: 'x' }], tags: ['t'.repeat(51)] },
    valid: false,
  },
  {
    name: 'ftp avatar',
    profile: { name: 'A', capabilities: [{ type: 'x' }], avatar: 'ftp://example.com/a' },
    valid: false,
  },
  {
    name: 'relative website',
    profile: { name: 'A', capabilities: [{ type: 'x' }], website: '/about' },
    valid: false,
  },
  {
    name: 'schema that does not compile',
    profile: { name: 'A', capabilities: [{ type: 'x', output_schema: { type: 'nope' } }] },
    valid: false,
  },
  {
    // Patterns run on RE2 (linear time) in the registry and the CLI alike: a pattern that would
    // backtrack in JavaScript is harmless there, and backtracking-only syntax is refused by both.
    name: 'nested quantifier pattern (linear under RE2)',
    profile: {
      name: 'A',
      capabilities: [{ type: 'x', input_schema: { type: 'string', pattern: '(a+)+$' } }],
    },
    valid: true,
  },
  {
    name: 'lookahead pattern',
    profile: {
      name: 'A',
      capabilities: [{ type: 'x', input_schema: { type: 'string', pattern: '^(?=a)a+$' } }],
    },
    valid: false,
  },
];

describe('validate agrees with the registry', () => {
  let registry: RunningRegistry;
  const home = tempHome();
  before(async () => {
    registry = await startRegistry();
  });
  after(async () => {
    await registry.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  for (const { name, profile, valid } of CASES) {
    it(`${name}: ${valid ? 'accepted' : 'refused'} by both`, async () => {
      const file = path.join(home, 'profile.json');
      fs.writeFileSync(file, JSON.stringify(profile));
      const local = await runCli(['validate', file, '--json'], { home });
      assert.equal(parseJson<{ valid: boolean }>(local).valid, valid, local.stdout);
      assert.equal(local.code, valid ? 0 : 1);

      const client = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
      const remote = await client.register(profile as Parameters<RegistryClient['register']>[0]).then(
        () => 'registered',
        (error: unknown) => {
          if (error instanceof RegistryError && error.status === 400) return 'refused';
          throw error;
        },
      );
      assert.equal(remote, valid ? 'registered' : 'refused');
    });
  }
});
