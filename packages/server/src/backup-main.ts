import { BackupError, backupDatabase, abandonBackups } from './backup.js';
import { ConfigError, loadConfig } from './kernel/config.js';

const USAGE = 'Usage: npm run backup -- <destination-file> [--force]';

/**
 * `npm run backup -- <file>`: a consistent copy of the database the registry's settings name
 * (DATABASE_URL, read as the server reads it). Exit status 0 once the copy is complete under its
 * name, 1 when it could not be made (one line saying why), 2 for a wrong command line.
 */
async function main(args: string[]): Promise<number> {
  const force = args.includes('--force');
  const files = args.filter((arg) => arg !== '--force');
  const [destination] = files;
  if (files.length !== 1 || destination === undefined || destination.startsWith('-')) {
    console.error(USAGE);
    return 2;
  }
  try {
    const config = loadConfig();
    const started = Date.now();
    const result = await backupDatabase(config.database, destination, { overwrite: force });
    process.stdout.write(
      `Backed up the ${result.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} database to ${result.file} (${result.bytes} bytes in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof BackupError) {
      console.error(`Backup failed: ${error.message}`);
      return 1;
    }
    // Still one line, as documented: what failed (e.g. an EIO while writing), not a stack trace.
    console.error(`Backup failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

// Stopped (Ctrl-C, a supervisor): no half-written file is left beside the destination.
for (const [signal, status] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.once(signal, () => {
    abandonBackups();
    console.error(`Backup interrupted (${signal}): nothing was written`);
    process.exit(status);
  });

process.exitCode = await main(process.argv.slice(2));
