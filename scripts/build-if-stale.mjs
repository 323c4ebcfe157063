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
    ? 'No build yet: building (once)...\n'
    : 'Sources changed since the last build: rebuilding...\n',
);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
