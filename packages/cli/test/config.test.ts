import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseJson, runCli, tempHome } from './harness.js';

interface ConfigOutput {
  home: string;
  registry: string;
  registry_source: string;
}

describe('config and registry precedence', () => {
  const home = tempHome();
  after(() => fs.rmSync(home, { recursive: true, force: true }));

  it('defaults to http://localhost:8080 and the directory from AGENT_REGISTRY_HOME', async () => {
    const json = parseJson<ConfigOutput>(await runCli(['config', '--json'], { home }));
    assert.equal(json.home, home);
    assert.equal(json.registry, 'http://localhost:8080');
    assert.equal(json.registry_source, 'default');
  });

  it('uses ~/.config/agent-registry, or $XDG_CONFIG_HOME/agent-registry, without AGENT_REGISTRY_HOME', async () => {
    const fakeHome = path.join(home, 'user');
    const plain = await runCli(['config', 'path'], {
      home,
      env: { AGENT_REGISTRY_HOME: undefined, HOME: fakeHome },
    });
    assert.equal(plain.stdout.trim(), path.join(fakeHome, '.config', 'agent-registry'));
    const xdg = await runCli(['config', 'path'], {
      home,
      env: { AGENT_REGISTRY_HOME: undefined, HOME: fakeHome, XDG_CONFIG_HOME: path.join(home, 'xdg') },
    });
    assert.equal(xdg.stdout.trim(), path.join(home, 'xdg', 'agent-registry'));
  });

  it('config set writes config.json with mode 0600; --registry beats AGENT_REGISTRY_URL beats the file', async () => {
    const set = await runCli(['config', 'set', 'registry', 'https://saved.example/'], { home });
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout.trim(), 'registry = https://saved.example');
    assert.equal(fs.statSync(path.join(home, 'config.json')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(home).mode & 0o077, 0);

    const fromFile = parseJson<ConfigOutput>(await runCli(['config', '--json'], { home }));
    assert.deepEqual([fromFile.registry, fromFile.registry_source], ['https://saved.example', 'config']);

    const env = { AGENT_REGISTRY_URL: 'https://env.example' };
    const fromEnv = parseJson<ConfigOutput>(await runCli(['config', '--json'], { home, env }));
    assert.deepEqual([fromEnv.registry, fromEnv.registry_source], ['https://env.example', 'env']);

    const fromFlag = parseJson<ConfigOutput>(
      await runCli(['config', '--json', '--registry', 'http://flag.example:9000/'], { home, env }),
    );
    assert.deepEqual([fromFlag.registry, fromFlag.registry_source], ['http://flag.example:9000', 'flag']);
    // The global option is accepted before the command too.
    const before = parseJson<ConfigOutput>(
      await runCli(['--registry', 'http://before.example', 'config', '--json'], { home, env }),
    );
    assert.equal(before.registry, 'http://before.example');

    assert.equal(
      (await runCli(['config', 'get', 'registry'], { home })).stdout.trim(),
      'https://saved.example',
    );
    assert.equal((await runCli(['config', 'unset', 'registry'], { home })).code, 0);
    assert.deepEqual(parseJson(await runCli(['config', 'get', 'registry', '--json'], { home })), {
      registry: null,
    });
  });

  it('refuses a bad registry URL and an unknown key with exit 2', async () => {
    const badFlag = await runCli(['config', '--registry', 'localhost:8080'], { home });
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /--registry must be an http:\/\/ or https:\/\/ URL/);
    const badEnv = await runCli(['config', '--json'], { home, env: { AGENT_REGISTRY_URL: 'nope' } });
    assert.equal(badEnv.code, 2);
    assert.equal(parseJson<{ error: { code: string } }>(badEnv).error.code, 'INVALID_REGISTRY_URL');
    const badKey = await runCli(['config', 'set', 'colour', 'blue'], { home });
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /unknown config key "colour"; known keys: registry/);
  });
});

describe('config.json holds tokens', () => {
  const home = tempHome();
  after(() => fs.rmSync(home, { recursive: true, force: true }));

  it('a config.json readable by others is made 0600 again, with a warning', async () => {
    const file = path.join(home, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ registry: 'https://saved.example', sessions: {} }, null, 2), {
      mode: 0o644,
    });
    fs.chmodSync(file, 0o644);
    const result = await runCli(['config', 'get', 'registry'], { home });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'https://saved.example');
    assert.match(
      result.stderr,
      /warning: .*config\.json was readable by other users \(mode 644\) and holds your tokens; its mode is now 0600/,
    );
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    // Once private, nothing more is said.
    const again = await runCli(['config', 'get', 'registry'], { home });
    assert.equal(again.stderr, '');
  });
});
