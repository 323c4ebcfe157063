import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * A checkout with the real build-if-stale script and stand-ins for TypeScript and the build-info
 * writer, which record their calls; `failing` names the package whose step fails.
 */
function fakeCheckout(failing?: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-if-stale-'));
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.copyFileSync(
    path.join(root, 'scripts/build-if-stale.mjs'),
    path.join(dir, 'scripts/build-if-stale.mjs'),
  );
  for (const name of ['protocol', 'search-index', 'sdk', 'cli', 'server'])
    fs.mkdirSync(path.join(dir, 'packages', name, 'src'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'packages/server/scripts'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'packages/server/scripts/write-build-info.mjs'),
    "import fs from 'node:fs'; fs.mkdirSync('dist', { recursive: true }); fs.writeFileSync('dist/build-info.json', '{}');\n",
  );
  fs.mkdirSync(path.join(dir, 'node_modules/typescript/bin'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'node_modules/typescript/bin/tsc'),
    `const project = process.argv.at(-1); if (${JSON.stringify(failing ?? '')} && project.includes(${JSON.stringify(`/${failing}/`)})) { console.error('error TS1: broken'); process.exit(2); }\n`,
  );
  return dir;
}

describe('scripts/build-if-stale.mjs (npm start builds first)', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a first build says so and shows each step as it goes, then nothing the next time', () => {
    const dir = fakeCheckout();
    dirs.push(dir);
    const first = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: dir, encoding: 'utf8' });
    assert.equal(first.status, 0, first.stderr);
    const lines = first.stderr.trim().split('\n');
    assert.match(lines[0] ?? '', /^No build yet: building \(once/);
    assert.deepEqual(
      lines.slice(1, 7).map((line) => line.replace(/done in [\d.]+ s$/, 'done in N s')),
      ['protocol', 'search-index', 'sdk', 'cli', 'server', 'build info'].map(
        (name, index) => `  [${index + 1}/6] ${name}... done in N s`,
      ),
    );
    assert.match(lines[7] ?? '', /^Built in [\d.]+ s\.$/);
    const again = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: dir, encoding: 'utf8' });
    assert.equal(again.status, 0);
    assert.equal(again.stderr, '', 'nothing changed: no build, no output');
  });

  test('a failing step names itself and the build stops there with its status', () => {
    const dir = fakeCheckout('sdk');
    dirs.push(dir);
    const run = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /\[3\/6\] sdk\.\.\. error TS1: broken\nfailed \(sdk\)\n$/);
    assert.doesNotMatch(run.stderr, /cli\.\.\./);
  });
});
