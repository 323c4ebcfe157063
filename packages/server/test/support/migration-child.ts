/**
 * A process that migrates a database and, when told, kills itself with SIGKILL right after one
 * statement of one migration (before its commit), as a crash or an OOM kill would: test/cross-node/upgrade.test.ts
 * runs it at every step of every migration.
 * Usage: node --import tsx test/support/migration-child.ts <DATABASE_URL> count | until <migration> | kill <migration> <statement>
 */
import { loadConfig } from '../../src/kernel/config.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';

const [url, mode, migration, statement] = process.argv.slice(2);
if (url === undefined || mode === undefined)
  throw new Error('usage: <DATABASE_URL> count | until <m> | kill <m> <n>');
const database = openDatabase(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' }).database);
const steps: Record<string, number> = {};
await migrateToLatest(database.db, {
  ...(mode === 'until' && migration !== undefined ? { until: migration } : {}),
  afterStatement: (name, step) => {
    steps[name] = step;
    if (mode === 'kill' && name === migration && step === Number(statement))
      process.kill(process.pid, 'SIGKILL');
  },
});
await database.close();
if (mode === 'count') process.stdout.write(JSON.stringify(steps));
