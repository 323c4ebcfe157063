// Records which source a dist/ was built from, for GET /version and the start-up log line.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

function git(...args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

const head = git('rev-parse', '--short=12', 'HEAD');
const dirty = head !== '' && git('status', '--porcelain', '--untracked-files=no', '--', '.') !== '';
const commit = head === '' ? null : `${head}${dirty ? '-dirty' : ''}`;
mkdirSync(new URL('../dist/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../dist/build-info.json', import.meta.url),
  `${JSON.stringify({ commit, built_at: new Date().toISOString() })}\n`,
);
