import { BackupError, vacuumInto } from './backup.js';

/**
 * The SQLite copy of `npm run backup`, in a process of its own (backup.ts, sqliteCopy): arguments
 * source, busy timeout (ms), target. Exit status 0 once the copy is written and checked; otherwise 1
 * with one line on stderr saying why.
 */
const [source, busyTimeoutMs, target] = process.argv.slice(2);
try {
  vacuumInto(source as string, Number(busyTimeoutMs), target as string);
} catch (error) {
  process.stderr.write(`${error instanceof BackupError ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
