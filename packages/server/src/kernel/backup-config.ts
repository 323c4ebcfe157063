import path from 'node:path';
import type { SettingValues } from './settings.js';

export interface BackupSchedule {
  intervalMs: number;
  /** Scheduled backups kept in the directory; the oldest beyond it are removed. */
  retention: number;
  /** Absolute path; the backups are named registry-<UTC time>.db (SQLite) or .dump (PostgreSQL). */
  directory: string;
}

/** Smallest interval: a backup reads the whole database, so never back to back. */
const MIN_BACKUP_INTERVAL_SECONDS = 60;

export function readBackupSchedule(v: SettingValues, problems: string[]): BackupSchedule | undefined {
  const seconds = v.BACKUP_INTERVAL_SECONDS;
  const directory = v.BACKUP_DIRECTORY;
  if (seconds === 0) {
    if (directory !== undefined)
      problems.push(
        'BACKUP_DIRECTORY is set but BACKUP_INTERVAL_SECONDS is 0: set the interval, or unset the directory',
      );
    return undefined;
  }
  if (seconds < MIN_BACKUP_INTERVAL_SECONDS)
    problems.push(
      `BACKUP_INTERVAL_SECONDS must be 0 (off) or at least ${MIN_BACKUP_INTERVAL_SECONDS}, got ${seconds}`,
    );
  if (directory === undefined || !path.isAbsolute(directory)) {
    problems.push(
      `BACKUP_INTERVAL_SECONDS needs BACKUP_DIRECTORY, an absolute directory outside the checkout (e.g. /var/backups/agent-registry)${directory === undefined ? '' : `, got "${directory}"`}`,
    );
    return undefined;
  }
  return { intervalMs: seconds * 1000, retention: v.BACKUP_RETENTION, directory: path.resolve(directory) };
}
