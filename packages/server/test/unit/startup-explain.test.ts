import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/kernel/config.js';
import { explainStartupFailure } from '../../src/startup.js';

const fsError = (code: string, path: string) =>
  Object.assign(new Error(`${code}: no such file, open '${path}'`), { code, path });

test("a file-system error names the database only when its path is the database's", () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite:/srv/registry/data/registry.db' }, '/srv/registry');
  assert.match(
    explainStartupFailure(fsError('ENOENT', '/srv/registry/data/registry.db'), config) ?? '',
    /^Cannot write the SQLite database \/srv\/registry\/data\/registry\.db/,
  );
  assert.match(
    explainStartupFailure(fsError('EACCES', '/srv/registry/data'), config) ?? '',
    /make its directory writable/,
  );
  // A file the code reads (an asset missing from an install) is a broken install, not a database path:
  // no remedy sentence, so the error itself is shown with its stack.
  assert.equal(
    explainStartupFailure(fsError('ENOENT', '/opt/app/packages/server/assets/site.css'), config),
    undefined,
  );
  // Errors without a path (SQLite's own) are still the database's.
  assert.match(
    explainStartupFailure(Object.assign(new Error('unable to open'), { code: 'SQLITE_CANTOPEN' }), config) ??
      '',
    /Cannot write the SQLite database/,
  );
});
