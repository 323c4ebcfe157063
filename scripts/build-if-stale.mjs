// `npm start` runs this first: it builds only when a source, config or lock file is newer than the
// last build (packages/server/dist/build-info.json, written at the end of every build), so restarts
// without changes skip TypeScript entirely.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'packages/server/dist/build-info.json');

function newest(entry) {
  let stats;
  try {
    stats = statSync(entry);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs;
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules' || name === 'dist' || name === 'test') continue;
    latest = Math.max(latest, newest(path.join(entry, name)));
  }
  return latest;
}

function sourcesChangedAt() {
  const inputs = [path.join(root, 'package-lock.json'), path.join(root, 'tsconfig.base.json')];
  const packages = path.join(root, 'packages');
  for (const name of existsSync(packages) ? readdirSync(packages) : []) {
    const dir = path.join(packages, name);
    inputs.push(path.join(dir, 'src'), path.join(dir, 'package.json'));
    for (const file of existsSync(dir) ? readdirSync(dir) : [])
      if (/^tsconfig.*\.json$/.test(file)) inputs.push(path.join(dir, file));
  }
  return Math.max(...inputs.map(newest));
}

const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (builtAt > 0 && sourcesChangedAt() <= builtAt) process.exit(0);

process.stderr.write(
  builtAt === 0
    ? 'No build yet: building (once, a minute or so on a small machine)...\n'
    : 'Sources changed since the last build: rebuilding...\n',
);

// One step per package, in dependency order, each announced and timed: a first build is not one
// silent minute. The same commands `npm run build` runs.
const STEPS = [
  ['protocol', ['tsc', '-b', 'packages/protocol/tsconfig.build.json']],
  ['search-index', ['tsc', '-b', 'packages/search-index/tsconfig.build.json']],
  ['sdk', ['tsc', '-b', 'packages/sdk/tsconfig.build.json']],
  ['cli', ['tsc', '-b', 'packages/cli/tsconfig.build.json']],
  ['server', ['tsc', '-p', 'packages/server/tsconfig.build.json']],
  // From the server's directory: it records whether the server's files differ from the commit.
  ['build info', ['node', 'scripts/write-build-info.mjs'], 'packages/server'],
];
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const started = Date.now();
for (const [index, [name, [tool, ...args], dir]] of STEPS.entries()) {
  const stepStarted = Date.now();
  process.stderr.write(`  [${index + 1}/${STEPS.length}] ${name}... `);
  const command = tool === 'tsc' ? [process.execPath, [tsc, ...args]] : [process.execPath, args];
  const result = spawnSync(command[0], command[1], {
    cwd: path.join(root, dir ?? '.'),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) {
    process.stderr.write(`failed (${name})\n`);
    process.exit(result.status ?? 1);
  }
  process.stderr.write(`done in ${((Date.now() - stepStarted) / 1000).toFixed(1)} s\n`);
}
process.stderr.write(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
