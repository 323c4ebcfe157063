import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const BIN = path.join(import.meta.dirname, '../bin/agent-registry.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-startup-'));

/** Module hooks that write every package specifier the CLI imports to a file, one a line. */
const hooks = path.join(dir, 'hooks.mjs');
fs.writeFileSync(
  hooks,
  `import fs from 'node:fs';
export async function resolve(specifier, context, next) {
  if (!specifier.startsWith('.') && !specifier.startsWith('node:') && !specifier.startsWith('file:'))
    fs.appendFileSync(process.env.LOADED_LOG, specifier + '\\n');
  return next(specifier, context);
}
`,
);
const register = path.join(dir, 'register.mjs');
fs.writeFileSync(
  register,
  `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
);

/** The packages a CLI run imported. */
function packagesLoadedBy(args: string[]): string[] {
  const log = path.join(dir, `loaded-${args.join('-').replace(/\W/g, '_')}.txt`);
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LOADED_LOG: log, AGENT_REGISTRY_HOME: path.join(dir, 'home') },
  });
  assert.ok(run.status !== null, run.stderr);
  return fs.existsSync(log) ? [...new Set(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean))] : [];
}

describe('CLI start-up loads what the command needs', () => {
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--help, completion and config load neither the SDK, the protocol index, nor Ajv', () => {
    for (const args of [['--help'], ['completion', 'bash'], ['config', 'list', '--json']]) {
      const loaded = packagesLoadedBy(args);
      assert.ok(loaded.includes('commander'), `${args.join(' ')}: ${loaded.join(', ')}`);
      for (const heavy of ['@agent-registry/sdk', '@agent-registry/protocol', 'ajv'])
        assert.ok(!loaded.includes(heavy), `${args.join(' ')} loaded ${heavy}: ${loaded.join(', ')}`);
    }
  });

  it('a command that talks to a registry loads the SDK when it runs', () => {
    const loaded = packagesLoadedBy([
      'show',
      'did:web:localhost:agent:0',
      '--registry',
      'http://127.0.0.1:9',
    ]);
    assert.ok(loaded.includes('@agent-registry/sdk'), loaded.join(', '));
  });
});
