import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, eventually, testDatabase, type TestDatabase } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import pino from 'pino';
import { BackupScheduler, scheduledBackupName } from '../../../src/backup-schedule.js';
import { MIGRATIONS } from '../../../src/db/migrations/index.js';

const run = promisify(execFile);

/** Every series the operations metrics add (docs/operations.md, "Metrics"). */
const NEW_METRICS = [
  'registry_transparency_log_tree_size',
  'registry_transparency_log_checkpoint_timestamp_seconds',
  'registry_transparency_log_rebuilds_total',
  'registry_transparency_log_signing_failures_total',
  'registry_transparency_log_catch_up_failures_total',
  'registry_search_index_agents',
  'registry_search_index_reloads_total',
  'registry_federation_round_duration_seconds',
  'registry_federation_rounds_total',
  'registry_federation_source_errors_total',
  'registry_federation_sources',
  'registry_federation_entries',
  'registry_migrations_applied_total',
  'registry_migration_seconds_total',
  'registry_schema_migrations',
  'registry_backup_last_success_timestamp_seconds',
  'registry_backup_last_size_bytes',
  'registry_backup_last_duration_seconds',
  'registry_backup_failures_total',
  'registry_webhook_probes_total',
  'registry_federation_peer_stops_total',
] as const;

/** One sample's value from the text format, by its name and labels as written (`name{a="b"}`). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Only the scheduled backups' names in a directory, sorted. */
const backupsIn = (dir: string): string[] =>
  fs
    .readdirSync(dir)
    .filter((name) => name.startsWith('registry-'))
    .sort();

describe('metrics for every moving part, and backups on a schedule', () => {
  let registry: TestRegistry;
  let dir: string;
  let agent: Registered;
  const OLD = ['registry-20200101T000000Z', 'registry-20200102T000000Z', 'registry-20200103T000000Z'].map(
    (name) => `${name}.${testDatabase === 'sqlite' ? 'db' : 'dump'}`,
  );

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-scheduled-backups-'));
    // Older scheduled backups and a file of the operator's: the retention removes only the former.
    for (const name of OLD) fs.writeFileSync(path.join(dir, name), 'old');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'kept');
    registry = await startRegistry({
      BACKUP_INTERVAL_SECONDS: '3600',
      BACKUP_RETENTION: '2',
      BACKUP_DIRECTORY: dir,
      // A source that cannot be reached: its round ends with the source in error.
      FEDERATION_A2A_CARDS: 'http://127.0.0.1:9/.well-known/agent-card.json',
      FEDERATION_REFRESH_SECONDS: '3600',
    });
    agent = await register(registry);
  });

  after(async () => {
    await registry?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a node takes a backup at once when none is due yet, keeps BACKUP_RETENTION of them and never touches other files', async () => {
    await eventually(
      () => backupsIn(dir).length === 2 && !backupsIn(dir).includes(OLD[1] ?? ''),
      'the scheduled backup and the retention',
    );
    const [kept, taken] = backupsIn(dir);
    assert.equal(kept, OLD[2]);
    assert.match(taken ?? '', /^registry-\d{8}T\d{6}Z\.(db|dump)$/);
    assert.ok(fs.existsSync(path.join(dir, 'notes.txt')));
    assert.equal(fs.statSync(path.join(dir, taken ?? '')).mode & 0o777, 0o600);
  });

  test('every new metric is on /metrics, with values from the running node', async () => {
    await eventually(() => backupsIn(dir).length === 2, 'the scheduled backup');
    let text = '';
    // The federation round runs in the background: its series appear once it has ended.
    for (let attempt = 0; attempt < 600; attempt++) {
      text = (await registry.app.inject({ method: 'GET', url: '/metrics' })).body;
      if (/^registry_federation_rounds_total\{kind="a2a"/m.test(text)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const name of NEW_METRICS) assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    assert.equal(sample(text, 'registry_transparency_log_tree_size'), 1);
    assert.ok((sample(text, 'registry_transparency_log_checkpoint_timestamp_seconds') ?? 0) > 0);
    assert.equal(sample(text, 'registry_transparency_log_rebuilds_total'), 0);
    assert.equal(sample(text, 'registry_search_index_agents'), 1);
    assert.equal(sample(text, 'registry_search_index_reloads_total{reason="change_feed_backwards"}'), 0);
    assert.equal(sample(text, 'registry_schema_migrations'), MIGRATIONS.length);
    const federation = text
      .split('\n')
      .filter((line) => line.startsWith('registry_federation_'))
      .join('\n');
    assert.equal(sample(text, 'registry_federation_round_duration_seconds_count{kind="a2a"}'), 1, federation);
    // A database too slow to answer (a loaded machine) fails the round as a whole: counted as failed.
    const ok = sample(text, 'registry_federation_rounds_total{kind="a2a",outcome="ok"}') ?? 0;
    const failed = sample(text, 'registry_federation_rounds_total{kind="a2a",outcome="failed"}') ?? 0;
    assert.equal(ok + failed, 1, federation);
    if (ok === 1) {
      assert.equal(sample(text, 'registry_federation_sources{kind="a2a",state="error"}'), 1, federation);
      assert.equal(sample(text, 'registry_federation_source_errors_total{kind="a2a"}'), 1, federation);
      assert.equal(sample(text, 'registry_federation_entries{kind="a2a"}'), 0, federation);
    }
    const backedUpAt = sample(text, 'registry_backup_last_success_timestamp_seconds') ?? 0;
    assert.ok(Math.abs(backedUpAt - registry.clock.now() / 1000) < 3600, String(backedUpAt));
    assert.ok((sample(text, 'registry_backup_last_size_bytes') ?? 0) > 0);
    // Labels from fixed sets only: no URL of a source in any series.
    assert.doesNotMatch(text, /127\.0\.0\.1:9/);
  });

  test('within the interval no node backs up; once due, of two nodes looking at once exactly one does', async () => {
    await eventually(() => backupsIn(dir).length === 2, 'the scheduled backup');
    const { ctx, clock, config } = registry;
    const schedule = config.operations.backups;
    assert.ok(schedule !== undefined);
    const scheduler = () =>
      new BackupScheduler({
        db: ctx.database.db,
        clock,
        log: pino({ level: 'silent' }),
        database: config.database,
        schedule,
        metrics: ctx.metrics.operations,
      });
    assert.equal(await scheduler().runIfDue(), undefined);
    clock.advance(schedule.intervalMs + 1000);
    const taken = (await Promise.all([scheduler().runIfDue(), scheduler().runIfDue()])).filter(
      (file) => file !== undefined,
    );
    assert.equal(taken.length, 1);
    assert.equal(path.basename(taken[0] ?? ''), scheduledBackupName(clock.now(), config.database.kind));
    assert.equal(backupsIn(dir).length, 2);
  });

  test('a scheduled backup restores: a node on the restored database serves the agent it held', async () => {
    await eventually(() => backupsIn(dir).length === 2, 'the scheduled backup');
    const newest = path.join(dir, backupsIn(dir).at(-1) ?? '');
    const restored: TestDatabase = await createTestDatabase();
    try {
      if (restored.file !== undefined) fs.copyFileSync(newest, restored.file);
      else
        await run('pg_restore', [
          '--exit-on-error',
          '--single-transaction',
          '--no-owner',
          `--dbname=${restored.url}`,
          newest,
        ]);
      const node = await startRegistry({}, { database: restored });
      try {
        const profile = await node.app.inject({ method: 'GET', url: `/api/agents/${agent.did}` });
        assert.equal(profile.statusCode, 200, profile.body);
        const search = await node.app.inject({ method: 'GET', url: '/api/agents/search?limit=10' });
        assert.equal((JSON.parse(search.body) as { total: number }).total, 1);
      } finally {
        await node.close();
      }
    } finally {
      await restored.drop();
    }
  });
});
