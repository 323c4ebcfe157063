import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from './harness.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const PACKAGES = ['protocol', 'sdk', 'cli'] as const;

/** This process's environment without the workspace selection of an enclosing `npm test -w ...`. */
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^npm_config_(workspace|workspaces|include_workspace_root)$/i.test(name),
  ),
);

/**
 * The packages as a user outside this repository gets them: packed with `npm pack`, installed from
 * the tarballs into an empty project (third-party dependencies come from the npm registry), then the
 * CLI run from its bin and the SDK imported and type-checked.
 */
describe('npm pack: installable tarballs of protocol, SDK and CLI', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pack-check-'));
  const app = path.join(work, 'app');
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('pack, install in a clean directory, run the CLI, import and type-check the SDK', async () => {
    await run(
      npm,
      ['pack', ...PACKAGES.flatMap((name) => ['-w', `@agent-registry/${name}`]), '--pack-destination', work],
      { cwd: repoRoot, env: npmEnv },
    );
    const tarballs = PACKAGES.map((name) => path.join(work, `agent-registry-${name}-0.1.0.tgz`));
    for (const tarball of tarballs) assert.ok(fs.existsSync(tarball), tarball);

    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'pack-check', private: true, type: 'module' }),
    );
    await run(npm, ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], {
      cwd: app,
      env: npmEnv,
    });

    for (const name of PACKAGES) {
      const installed = path.join(app, 'node_modules/@agent-registry', name);
      for (const file of ['README.md', 'LICENSE', 'package.json']) {
        assert.ok(fs.existsSync(path.join(installed, file)), `${name}/${file}`);
      }
      assert.match(fs.readFileSync(path.join(installed, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
      assert.ok(!fs.lstatSync(installed).isSymbolicLink(), `${name} is a copy, not a link into the clone`);
    }
    for (const name of ['protocol', 'sdk'] as const) {
      assert.ok(fs.existsSync(path.join(app, 'node_modules/@agent-registry', name, 'dist/index.d.ts')), name);
    }

    const help = await run(path.join(app, 'node_modules/.bin/agent-registry'), ['--help'], { cwd: app });
    assert.match(help.stdout, /^Usage: agent-registry /);
    assert.match(help.stdout, /\btoken\b/);

    const script = [
      "import { AgentKey, RegistryClient } from '@agent-registry/sdk';",
      "import { saveKey } from '@agent-registry/sdk/node';",
      "import { canonicalJson } from '@agent-registry/protocol';",
      'const key = AgentKey.generateEd25519();',
      "const file = await saveKey('./agent-key.json', key);",
      "const client = new RegistryClient({ registry: 'http://127.0.0.1:9', key });",
      'console.log(JSON.stringify({ file, publicKey: await key.publicKey(), registry: client.registry, json: canonicalJson({ b: 1, a: 2 }) }));',
    ].join('\n');
    fs.writeFileSync(path.join(app, 'use.mjs'), script);
    const used = JSON.parse((await run(process.execPath, ['use.mjs'], { cwd: app })).stdout) as Record<
      string,
      string
    >;
    assert.equal(used.file, path.join(app, 'agent-key.json'));
    assert.match(used.publicKey ?? '', /^[0-9a-f]{64}$/);
    assert.equal(used.registry, 'http://127.0.0.1:9');
    assert.equal(used.json, '{"a":2,"b":1}');

    // The types ship: a strict TypeScript program against the installed packages compiles.
    fs.writeFileSync(
      path.join(app, 'typed.ts'),
      [
        "import { AgentKey, RegistryClient, type AgentProfile } from '@agent-registry/sdk';",
        "import { saveKey } from '@agent-registry/sdk/node';",
        'const key: AgentKey = AgentKey.generateEd25519();',
        "const client = new RegistryClient({ registry: 'http://127.0.0.1:9', key });",
        'const read: (did: string) => Promise<AgentProfile> = (did) => client.getAgent(did);',
        'export const parts = [read, saveKey] as const;',
      ].join('\n'),
    );
    await run(
      process.execPath,
      [
        path.join(repoRoot, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        'node',
        '--typeRoots',
        path.join(repoRoot, 'node_modules/@types'),
        'typed.ts',
      ],
      { cwd: app },
    );
  });
});
