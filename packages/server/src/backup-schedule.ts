import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { backupDatabase } from './backup.js';
import type { Db } from './db/connect.js';
import { readSetting, writeSettingOnce } from './db/settings.js';
import type { Clock } from './kernel/clock.js';
import type { BackupSchedule, DatabaseConfig } from './kernel/config.js';
import { every, type BackgroundJobs } from './kernel/periodic.js';
import type { OperationsMetrics } from './telemetry/operations-metrics.js';

/** When the last scheduled backup was claimed, and when one last succeeded (epoch ms), shared by every node. */
const CLAIMED = 'scheduled_backup_claimed_at';
const SUCCEEDED = 'scheduled_backup_succeeded_at';
/** How often a node looks whether a backup is due (and refreshes the metric); the interval is at least 60 s. */
const TICK_MS = 30_000;
/** Only files of this shape are ever removed by the retention. */
const BACKUP_NAME = /^registry-\d{8}T\d{6}Z\.(db|dump)$/;

export interface BackupScheduleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  database: DatabaseConfig;
  schedule: BackupSchedule;
  metrics: OperationsMetrics;
  /** How often to look whether one is due (tests); TICK_MS by default. */
  tickMs?: number;
}

/** registry-20261129T100100Z.db: sorts by time, and says which database it holds. */
export function scheduledBackupName(at: number, kind: DatabaseConfig['kind']): string {
  const stamp = new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `registry-${stamp}.${kind === 'sqlite' ? 'db' : 'dump'}`;
}

/**
 * Takes a backup every interval, on one node of many: the node that moves the shared claim (a
 * compare-and-set on one row) takes it, into its BACKUP_DIRECTORY, then removes the oldest scheduled
 * backups beyond the retention. A failed backup gives the claim back, so the next look retries it.
 */
export class BackupScheduler {
  constructor(private readonly deps: BackupScheduleDeps) {}

  start(): BackgroundJobs {
    const onError = (error: unknown): void => {
      this.deps.log.error({ err: error, job: 'scheduled-backup' }, 'background job failed');
    };
    // The first look at once: a node that was down past the interval backs up now.
    const first = this.runIfDue().catch(onError);
    const timer = every(this.deps.tickMs ?? TICK_MS, () => this.runIfDue(), onError);
    return {
      stop: async () => {
        await first;
        await timer.stop();
      },
    };
  }

  /** One look: the metric refreshed from the shared row, and a backup when one is due and this node claims it. */
  async runIfDue(): Promise<string | undefined> {
    const { db, clock, schedule } = this.deps;
    const claimed = await writeSettingOnce(db, CLAIMED, '0', clock.now());
    await this.refreshMetric();
    const now = clock.now();
    if (Number(claimed) + schedule.intervalMs > now) return undefined;
    if (!(await this.compareAndSet(claimed, String(now)))) return undefined;
    try {
      return await this.backUp(now);
    } catch (error) {
      this.deps.metrics.backupFailed();
      await this.compareAndSet(String(now), claimed).catch(() => undefined);
      throw error;
    }
  }

  private async backUp(now: number): Promise<string> {
    const { db, clock, log, database, schedule, metrics } = this.deps;
    const file = path.join(schedule.directory, scheduledBackupName(now, database.kind));
    const started = clock.now();
    const result = await backupDatabase(database, file, { overwrite: false });
    const done = clock.now();
    await db
      .insertInto('registry_settings')
      .values({ key: SUCCEEDED, value: String(done), created_at: done })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value: String(done) }))
      .execute();
    metrics.backupSucceeded({ atMs: done, bytes: result.bytes, seconds: (done - started) / 1000 });
    const removed = this.prune();
    log.info(
      { file: result.file, bytes: result.bytes, ms: done - started, removed },
      `scheduled backup written to ${result.file}`,
    );
    return result.file;
  }

  /** Removes the oldest scheduled backups beyond the retention; other files in the directory are left alone. */
  private prune(): string[] {
    const { directory, retention } = this.deps.schedule;
    const backups = fs
      .readdirSync(directory)
      .filter((name) => BACKUP_NAME.test(name))
      .sort();
    const old = backups.slice(0, Math.max(0, backups.length - retention));
    for (const name of old) fs.rmSync(path.join(directory, name), { force: true });
    return old;
  }

  private async refreshMetric(): Promise<void> {
    const succeeded = await readSetting(this.deps.db, SUCCEEDED);
    if (succeeded !== undefined) this.deps.metrics.backupSucceeded({ atMs: Number(succeeded) });
  }

  private async compareAndSet(seen: string, value: string): Promise<boolean> {
    const result = await this.deps.db
      .updateTable('registry_settings')
      .set({ value })
      .where('key', '=', CLAIMED)
      .where('value', '=', seen)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
