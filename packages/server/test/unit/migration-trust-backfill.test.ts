import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { systemClock } from '../../src/kernel/clock.js';
import { loadConfig } from '../../src/kernel/config.js';
import { openDatabase, type DatabaseHandle, type Db } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { recordReferral, recordWebhookHost } from '../../src/modules/agents/identity-links.js';
import { ServiceRecordService } from '../../src/modules/service-record/service-record.js';
import { agentTableRow } from '../support/database-fixtures.js';
import { createTestDatabase, testDatabase, type TestDatabase } from '@agent-registry/testkit';

const BEFORE_TRUST = '006-invocation-idempotency';
const DOMAIN = 'localhost%3A8080';
const did = (id: string) => `did:web:${DOMAIN}:agent:${id.repeat(16)}`;

/** Agents: a target, callers, two agents behind one webhook host and one referred by another. */
const agents = [
  agentTableRow(did('aa'), { webhook_url: 'https://hooks.example.com/a', created_at: 10 }),
  agentTableRow(did('bb'), { webhook_url: 'https://HOOKS.example.com/b', created_at: 11 }),
  agentTableRow(did('cc'), { referrer: ` ${did('AA')} `, created_at: 12 }),
  agentTableRow(did('dd'), { referrer: 'a friend', created_at: 13 }),
  agentTableRow(did('ee'), { webhook_url: 'not a url', created_at: 14 }),
  agentTableRow(did('ff'), { created_at: 15 }),
];

/** Each bucket edge of the service record, and one millisecond past it. */
const LATENCIES = [
  0,
  ...[50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000, 120_000].flatMap((edge) => [
    edge,
    edge + 1,
  ]),
];
const STATUSES = [
  'completed',
  'completed',
  'failed',
  'timeout',
  'completed',
  'pending',
  'processing',
] as const;
const PAIRS = [
  ['cc', 'bb'],
  ['dd', 'bb'],
  ['ff', 'bb'],
  ['aa', 'bb'], // one webhook host: linked
  ['cc', 'aa'], // cc was referred by aa: linked
  ['ff', 'ff'], // itself
  ['dd', 'ff'],
  ['ee', 'aa'],
] as const;

/** Finished and open tasks over the last 40 days, in completion order (ids sort the same way). */
function tasks(now: number) {
  return Array.from({ length: 700 }, (_, index) => {
    const [caller, target] = PAIRS[index % PAIRS.length] as readonly [string, string];
    const status = STATUSES[index % STATUSES.length] as (typeof STATUSES)[number];
    const completedAt = now - 40 * 86_400_000 + index * 4_900_000;
    const latency = LATENCIES[index % LATENCIES.length] as number;
    const finished = status !== 'pending' && status !== 'processing';
    return {
      id: `task-${String(index).padStart(5, '0')}`,
      caller_did: did(caller),
      target_did: did(target),
      capability: index % 3 === 0 ? 'translate' : 'echo',
      input: '{}',
      status,
      delivery_mode: 'queue' as const,
      output: status === 'completed' ? '{}' : null,
      error: null,
      error_code: null,
      created_at: completedAt - latency,
      deadline_at: completedAt + 30_000,
      accepted_at: null,
      completed_at: finished ? completedAt : null,
    };
  });
}

async function open(database: TestDatabase): Promise<DatabaseHandle> {
  return openDatabase(loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' }).database);
}

async function fill(db: Db, now: number, taskCount = Infinity): Promise<void> {
  await db.insertInto('agents').values(agents).execute();
  const rows = tasks(now).slice(0, taskCount);
  for (let from = 0; from < rows.length; from += 100)
    await db
      .insertInto('tasks')
      .values(rows.slice(from, from + 100))
      .execute();
}

/** Everything 007 fills, in one comparable shape. */
async function filled(db: Db) {
  const all = async (table: string, columns: string, order: string) =>
    (
      await sql.raw<Record<string, unknown>>(`select ${columns} from ${table} order by ${order}`).execute(db)
    ).rows.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [
          key,
          value === null ? null : Number.isNaN(Number(value)) ? value : Number(value),
        ]),
      ),
    );
  return {
    evidence: await all('identity_evidence', 'did, evidence', 'did, evidence'),
    daily: await all('service_daily', '*', 'did, day, capability'),
    totals: await all('service_totals', '*', 'did, capability'),
    callers: await all('service_callers', '*', 'did, day, capability, caller_did'),
    partners: await all('call_partners', '*', 'caller_did, target_did'),
    summaries: await all(
      'agents',
      'did, service_success_rate, service_latency_p50_ms, service_calls_30d, service_last_completed_at',
      'did',
    ),
  };
}

test(`migration 007 counts the tasks on file as the live service counts a finished task (${testDatabase})`, async () => {
  const now = Date.now();
  const migrated = await createTestDatabase();
  const live = await createTestDatabase();
  const small = await createTestDatabase();
  const handles: DatabaseHandle[] = [];
  try {
    // The migration, over an earlier release's tables.
    const before = await open(migrated);
    handles.push(before);
    await migrateToLatest(before.db, { until: BEFORE_TRUST });
    await fill(before.db, now);
    const statements: Record<string, number> = {};
    await migrateToLatest(before.db, {
      afterStatement: (name, statement) => void (statements[name] = statement),
    });

    // What the services write for the same agents and tasks, one finished task at a time.
    const current = await open(live);
    handles.push(current);
    await migrateToLatest(current.db);
    await fill(current.db, now);
    for (const agent of agents) {
      if (agent.webhook_url != null)
        await recordWebhookHost(current.db, agent.did, agent.webhook_url, 0).catch(() => undefined);
      await recordReferral(current.db, agent.did, agent.referrer, DOMAIN, 0);
    }
    const record = new ServiceRecordService({ db: current.db, clock: systemClock });
    for (const task of tasks(now)) await record.recordFinished(current.db, task.id);
    // The services leave each agent's 30-day columns as of its last finished task; the periodic
    // refresh (and the migration) as of now.
    for (const agent of agents) await record.refreshSummary(current.db, agent.did, now);

    assert.deepEqual(await filled(before.db), await filled(current.db));
    const counted = await filled(before.db);
    assert.ok(counted.daily.length > 20 && counted.partners.length > 0, 'the data reaches every table');

    // Set-based: as many statements over 700 tasks as over one.
    const bare = await open(small);
    handles.push(bare);
    await migrateToLatest(bare.db, { until: BEFORE_TRUST });
    await fill(bare.db, now, 1);
    const bareStatements: Record<string, number> = {};
    await migrateToLatest(bare.db, {
      afterStatement: (name, statement) => void (bareStatements[name] = statement),
    });
    assert.equal(statements['007-trust'], bareStatements['007-trust']);
  } finally {
    for (const handle of handles) await handle.close();
    await Promise.all([migrated.drop(), live.drop(), small.drop()]);
  }
});
