import type { Kysely } from 'kysely';
import { systemClock } from '../../clock.js';
import { recordReferral, recordWebhookHost } from '../../services/identity-links.js';
import { ServiceRecordService } from '../../services/service-record.js';
import type { Db } from '../connect.js';

/**
 * Issue 17: the measured service record (daily rollups written in the transaction that ends a task),
 * the caller -> target pairs that reputation v2 reads for breadth and reciprocity, the evidence that
 * links identities of one operator, and the per-agent record columns search sorts and filters on.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per (agent, capability, UTC day): outcome counts and a fixed latency histogram.
  let daily = db.schema
    .createTable('service_daily')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('timeout', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_completed_at', 'bigint');
  for (let bucket = 0; bucket < LATENCY_BUCKET_COUNT; bucket += 1) {
    daily = daily.addColumn(`lat_${bucket}`, 'integer', (col) => col.notNull().defaultTo(0));
  }
  await daily.addPrimaryKeyConstraint('service_daily_pk', ['did', 'day', 'capability']).execute();

  // Distinct callers, exactly: one row per (agent, capability, day, caller), kept for the 30-day window.
  await db.schema
    .createTable('service_callers')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('day', 'integer', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('service_callers_pk', ['did', 'day', 'capability', 'caller_did'])
    .execute();

  // All-time totals per (agent, capability): what the daily rows roll up into once they are pruned.
  await db.schema
    .createTable('service_totals')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('capability', 'text', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('timeout', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_completed_at', 'bigint')
    .addPrimaryKeyConstraint('service_totals_pk', ['did', 'capability'])
    .execute();

  // Who really called whom (a completed, counted invocation), for reviewer breadth and reciprocity.
  await db.schema
    .createTable('call_partners')
    .addColumn('caller_did', 'text', (col) => col.notNull())
    .addColumn('target_did', 'text', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('first_completed_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('call_partners_pk', ['caller_did', 'target_did'])
    .execute();
  await db.schema
    .createIndex('call_partners_target_idx')
    .on('call_partners')
    .columns(['target_did', 'caller_did'])
    .execute();

  // Evidence that identities share an operator: agents with a common key are linked.
  await db.schema
    .createTable('identity_evidence')
    .addColumn('did', 'text', (col) => col.notNull())
    .addColumn('evidence', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('identity_evidence_pk', ['did', 'evidence'])
    .execute();
  await db.schema
    .createIndex('identity_evidence_key_idx')
    .on('identity_evidence')
    .columns(['evidence', 'did'])
    .execute();

  // The 30-day summary search sorts and filters on, kept on the agent row.
  await db.schema.alterTable('agents').addColumn('service_success_rate', 'double precision').execute();
  await db.schema.alterTable('agents').addColumn('service_latency_p50_ms', 'double precision').execute();
  await db.schema
    .alterTable('agents')
    .addColumn('service_calls_30d', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('agents').addColumn('service_last_completed_at', 'bigint').execute();

  await backfill(db as unknown as Db);
}

/**
 * What the registry already knows when this migration runs: links from the webhooks and referrers on
 * file, then every finished task, counted as the broker now counts new ones. Agents' reputation moves
 * to v2 at their next review or the next periodic refresh.
 */
async function backfill(db: Db): Promise<void> {
  const agents = await db
    .selectFrom('agents')
    .select(['did', 'webhook_url', 'referrer', 'created_at'])
    .execute();
  const domainOf = (did: string) => (did.startsWith('did:web:') ? (did.split(':')[2] ?? '') : '');
  for (const agent of agents) {
    const at = Number(agent.created_at);
    if (agent.webhook_url !== null) {
      try {
        await recordWebhookHost(db, agent.did, agent.webhook_url, at);
      } catch {
        // A stored URL that no longer parses links nothing.
      }
    }
    await recordReferral(db, agent.did, agent.referrer, domainOf(agent.did), at);
  }
  const record = new ServiceRecordService({ db, clock: systemClock });
  for (let after = ''; ;) {
    const page = await db
      .selectFrom('tasks')
      .select('id')
      .where('status', 'in', ['completed', 'failed', 'timeout'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (page.length === 0) break;
    for (const task of page) await record.recordFinished(db, task.id);
    after = page[page.length - 1]?.id ?? after;
  }
}

/** Must equal LATENCY_BUCKETS_MS.length in services/service-record-model.ts (a test checks it). */
export const LATENCY_BUCKET_COUNT = 12; // LATENCY_BUCKETS_MS.length + 1, fixed here: a migration never changes
