import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseJson, runCli, startRegistry, tempHome, type RunningRegistry } from './harness.js';

describe("register --dry-run: the registry's own limits, nothing registered", () => {
  let registry: RunningRegistry;
  const home = tempHome();
  const cli = (...args: string[]) => runCli([...args, '--registry', registry.url], { home });

  before(async () => {
    // The smallest profile this registry stores: 16 KB.
    registry = await startRegistry({ PROFILE_MAX_KB: '16' });
    assert.equal((await cli('init', '--name', 'Dry runner', '--capability', 'echo:Echoes')).code, 0);
  });
  after(async () => {
    await registry.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('a profile within the limits passes, and the agent is not registered', async () => {
    const dry = await cli('register', '--dry-run', '--json');
    assert.equal(dry.code, 0, dry.stderr);
    const report = parseJson<{ valid: boolean; profile_max_bytes: number; audience: string }>(dry);
    assert.equal(report.valid, true);
    assert.equal(report.profile_max_bytes, 16 * 1024);
    assert.equal(report.audience, registry.url);
    const whoami = await cli('whoami');
    assert.notEqual(whoami.code, 0, 'no session: nothing was registered');
    const stats = parseJson<{ agents_count: number }>(await cli('api', 'GET', '/api/stats', '--anonymous'));
    assert.equal(stats.agents_count, 0);
  });

  it("a profile over this registry's size is refused before anything is sent, as registering would be", async () => {
    const profilePath = path.join(home, 'profile.json');
    const profile = JSON.parse(fs.readFileSync(profilePath, 'utf8')) as { capabilities: object[] };
    const big = {
      ...profile,
      capabilities: Array.from({ length: 20 }, (_, index) => ({
        type: `echo${index}`,
        description: 'x'.repeat(1000),
      })),
    };
    const file = path.join(home, 'big.json');
    fs.writeFileSync(file, JSON.stringify(big));
    const dry = await cli('register', '--dry-run', '--profile', file);
    assert.equal(dry.code, 1);
    assert.match(
      dry.stderr,
      /would be refused:\n {2}the profile takes \d+ bytes as stored; this registry stores at most 16384/,
    );
    const real = await cli('register', '--profile', file, '--json');
    assert.equal(real.code, 1);
    assert.equal(parseJson<{ error: { code: string } }>(real).error.code, 'PROFILE_TOO_LARGE');
  });
});
