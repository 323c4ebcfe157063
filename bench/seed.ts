/**
 * Seeds a fresh registry database through the service's own storage layer (the Kysely store functions
 * registration and reviews use), in transactions of a few hundred rows, never through HTTP.
 * Reputation aggregates are computed with the service's own formula from the reviews written.
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { pkhDid, toChecksumAddress, webDid } from '@agent-registry/protocol';
import {
  aggregateReviews,
  evidencedRatingsOf,
  insertAgent,
  insertReview,
  insertTask,
  migrateToLatest,
  openDatabase,
  stampAgentChange,
  writeReputation,
  type Config,
  type Db,
  type NewAgentRow,
  type NewReviewRow,
} from '@agent-registry/testkit/server-internals';
import { registeredAgentRow } from '@agent-registry/testkit/agent-rows';
import { prng, syntheticProfile, zipf } from './corpus.js';

export interface SeedOptions {
  database: Config['database'];
  agents: number;
  /** did:web domain of the registry that will serve this database. */
  didWebDomain: string;
  /** Rows per transaction. */
  batch?: number;
  /** Transactions in flight at once (PostgreSQL only; SQLite has one connection). */
  parallel?: number;
  seed?: number;
  /** Remote entries written beside the agents (as a peer follower leaves them), for federated search. */
  remote?: number;
  log?: (line: string) => void;
}

export interface SeedResult {
  dids: string[];
  reviews: number;
  verifiedReviews: number;
  reviewedAgents: number;
  agentsSeconds: number;
  reviewsSeconds: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export async function seedRegistry(options: SeedOptions): Promise<SeedResult> {
  const batch = options.batch ?? 500;
  const parallel = options.database.kind === 'postgres' ? (options.parallel ?? 4) : 1;
  const log = options.log ?? (() => undefined);
  const handle = openDatabase(options.database);
  const { db } = handle;
  try {
    await migrateToLatest(db);
    const random = prng(options.seed ?? 20261122);
    const now = Date.now();
    const dids: string[] = new Array<string>(options.agents);
    const createdAt: number[] = new Array<number>(options.agents);

    // Agents: written a batch per transaction, each batch's rows built when a transaction takes it, so
    // that a million rows (about 1 KB of heap each) are never held at once. Batches are built in seed
    // order, so the PRNG's sequence, and with it the seed, does not depend on `parallel`.
    const started = performance.now();
    let built = 0;
    const nextAgents = (): NewAgentRow[] | undefined => {
      if (built >= options.agents) return undefined;
      const rows: NewAgentRow[] = [];
      for (const end = Math.min(options.agents, built + batch); built < end; built++) {
        const n = built;
        const profile = syntheticProfile(random, n);
        const created = now - Math.floor(random() * 730 * DAY_MS) - DAY_MS;
        const secp = random() < 0.1;
        let did: string;
        let publicKey: string;
        let keyId: string;
        let chainId: string | null = null;
        if (secp) {
          // Stored as registration would store it; the key bytes are random (no request verifies them).
          publicKey = `04${crypto.randomBytes(64).toString('hex')}`;
          keyId = `secp256k1:0${2 + (n % 2)}${publicKey.slice(2, 66)}`;
          chainId = 'eip155:1';
          did = pkhDid(chainId, toChecksumAddress(crypto.randomBytes(20).toString('hex')));
        } else {
          publicKey = crypto.randomBytes(32).toString('hex');
          keyId = `ed25519:${publicKey}`;
          did = webDid(options.didWebDomain, crypto.randomBytes(16).toString('hex'));
        }
        dids[n] = did;
        createdAt[n] = created;
        const row: NewAgentRow = registeredAgentRow(did, {
          key_type: secp ? 'secp256k1' : 'ed25519',
          public_key: publicKey,
          key_id: keyId,
          chain_id: chainId,
          name: profile.name,
          description: profile.description,
          avatar: random() < 0.3 ? `https://avatars.example.com/${n}.png` : null,
          website: random() < 0.4 ? `https://agent-${n}.example.com` : null,
          capabilities: JSON.stringify(profile.capabilities),
          tags: JSON.stringify(profile.tags),
          status: random() < 0.02 ? 'deactivated' : 'active',
          created_at: created,
          updated_at: created,
        });
        if (row.status === 'deactivated') row.deactivated_at = now - DAY_MS;
        rows.push(row);
      }
      return rows;
    };

    await inParallel(nextAgents, parallel, async (chunk) => {
      await db.transaction().execute(async (trx) => {
        for (const row of chunk) await insertAgent(trx, row);
        // As registration does: each agent's place in the change feed, which search indexes follow;
        // last in the transaction, so parallel batches wait for the feed's lock only at their end.
        for (const row of chunk) await stampAgentChange(trx, row.did);
      });
    });
    const agentsSeconds = (performance.now() - started) / 1000;
    log(`seeded ${options.agents} agents in ${agentsSeconds.toFixed(1)} s`);
    // The agents land faster than autovacuum analyzes them, and without statistics PostgreSQL plans the
    // reviews' evidence query (stores/reviews.ts, evidencedRatingsOf) as if the tables were empty: at
    // a million agents the reviews went in at 360 a second, and at 3,719 once analyzed.
    if (handle.dialect === 'postgres') await sql`analyze`.execute(db);

    // Reviews: about 40% of agents are reviewed, a few reviewers each (a long tail gets many), 15%
    // verified by a completed task; each target's aggregates are written in the same transaction.
    const reviewStart = performance.now();
    const perAgent = zipf(40, 1.8);
    interface TargetPlan {
      target: number;
      reviews: NewReviewRow[];
      tasks: Parameters<typeof insertTask>[1][];
    }
    // Groups of whole targets of about `batch` reviews each, planned when a transaction takes them (in
    // seed order, like the agents), so the reviews of a million agents are never held at once.
    let reviewedAgents = 0;
    let reviewCount = 0;
    let verifiedCount = 0;
    let nextTarget = 0;
    const nextGroup = (): TargetPlan[] | undefined => {
      const group: TargetPlan[] = [];
      let size = 0;
      for (; nextTarget < options.agents && size < batch; nextTarget++) {
        const target = nextTarget;
        if (random() >= 0.4) continue;
        const count = 1 + perAgent(random);
        const reviewers = new Set<number>();
        const plan: TargetPlan = { target, reviews: [], tasks: [] };
        for (let guard = 0; reviewers.size < count && guard < count * 4; guard++) {
          const reviewer = Math.floor(random() * options.agents);
          if (reviewer === target || reviewers.has(reviewer)) continue;
          reviewers.add(reviewer);
          const earliest = Math.max(createdAt[target] as number, createdAt[reviewer] as number);
          const created = earliest + Math.floor(random() * Math.max(1, now - earliest));
          // Ratings lean high, as on real marketplaces; hundredths 100-1000.
          const rating = Math.min(
            1000,
            Math.max(100, Math.round((10 - Math.pow(random(), 0.6) * 9) * 10) * 10),
          );
          const verified = random() < 0.15;
          const id = crypto.randomUUID();
          let callRecordId: string | null = null;
          if (verified) {
            callRecordId = crypto.randomUUID();
            plan.tasks.push({
              id: callRecordId,
              caller_did: dids[reviewer] as string,
              target_did: dids[target] as string,
              capability: 'general',
              input: '{}',
              status: 'completed',
              delivery_mode: 'queue',
              output: '{"ok":true}',
              error: null,
              error_code: null,
              created_at: created - 1000,
              deadline_at: created + 29_000,
              accepted_at: created - 900,
              completed_at: created - 500,
            });
            verifiedCount++;
          }
          plan.reviews.push({
            id,
            reviewer_did: dids[reviewer] as string,
            target_did: dids[target] as string,
            rating,
            comment:
              random() < 0.6 ? `Review ${reviewCount}: ${rating >= 700 ? 'worked well' : 'not great'}` : null,
            verified: verified ? 1 : 0,
            call_record_id: callRecordId,
            edit_count: 0,
            created_at: created,
            updated_at: created,
          });
          reviewCount++;
        }
        group.push(plan);
        reviewedAgents++;
        size += plan.reviews.length;
      }
      return group.length > 0 ? group : undefined;
    };
    await inParallel(nextGroup, parallel, async (group) => {
      await db.transaction().execute(async (trx) => {
        const changed: string[] = [];
        for (const plan of group) {
          for (const task of plan.tasks) await insertTask(trx, task);
          for (const review of plan.reviews) await insertReview(trx, review);
          // Reputation v2 weighs each review by evidence about its reviewer, read as the server reads it.
          const target = dids[plan.target] as string;
          const aggregates = aggregateReviews(await evidencedRatingsOf(trx, target), now);
          if (await writeReputation(trx, target, aggregates, false)) changed.push(target);
        }
        // The change feed's lock last, after every agent row this transaction writes (as the server does).
        for (const did of changed) await stampAgentChange(trx, did);
      });
    });
    const reviewsSeconds = (performance.now() - reviewStart) / 1000;
    log(
      `seeded ${reviewCount} reviews (${verifiedCount} verified) of ${reviewedAgents} agents in ${reviewsSeconds.toFixed(1)} s`,
    );
    if ((options.remote ?? 0) > 0) {
      const remoteStart = performance.now();
      await seedRemoteEntries(db, options.remote ?? 0, options.agents, batch);
      log(
        `seeded ${options.remote} remote entries in ${((performance.now() - remoteStart) / 1000).toFixed(1)} s`,
      );
    }
    await foldWal(db, handle.dialect);
    return {
      dids,
      reviews: reviewCount,
      verifiedReviews: verifiedCount,
      reviewedAgents,
      agentsSeconds,
      reviewsSeconds,
    };
  } finally {
    await handle.close();
  }
}

/**
 * `count` entries mirrored from one peer, written straight into remote_entries as the peer follower
 * leaves them (verified, active, numbered in order): synthetic profiles from the same corpus, numbered
 * on after the `agents` local ones, so every search shape matches some of them.
 */
export async function seedRemoteEntries(db: Db, count: number, agents: number, batch: number): Promise<void> {
  const peer = 'https://peer.example';
  const sourceId = `peer:${peer}`;
  const random = prng(20261127);
  const now = Date.now();
  await db
    .insertInto('remote_sources')
    .values({ id: sourceId, kind: 'peer', url: peer, state: 'ok' })
    .execute();
  for (let start = 0; start < count; start += batch) {
    const rows = [];
    for (let n = start; n < Math.min(count, start + batch); n += 1) {
      const profile = syntheticProfile(random, agents + n);
      const did = `did:web:peer.example:agent:${n.toString(16).padStart(32, '0')}`;
      rows.push({
        id: `${sourceId}#${did}`,
        source_id: sourceId,
        kind: 'mirrored' as const,
        did,
        name: profile.name,
        description: profile.description,
        capabilities: JSON.stringify(profile.capabilities),
        tags: JSON.stringify(profile.tags),
        endpoints: JSON.stringify([{ type: 'a2a', url: `${peer}/a2a/${n}/` }]),
        home_registry: peer,
        provenance: JSON.stringify({
          kind: 'mirrored',
          home_registry: peer,
          checkpoint: { origin: 'peer.example/log', size: count, root_hash: 'AAAA' },
          state: 'verified',
          verified_at: now,
        }),
        status: 'active' as const,
        created_at: now - n,
        updated_at: now - n,
        seq: n + 1,
      });
    }
    await db.insertInto('remote_entries').values(rows).execute();
  }
}

/**
 * Runs `work` on each chunk `next` makes until it makes none, at most `parallel` at a time. A lane asks
 * for its next chunk only when it is free, and `next` runs to completion before any other lane's, so
 * the chunks are made in order whatever `parallel` is.
 */
async function inParallel<T>(
  next: () => T | undefined,
  parallel: number,
  work: (chunk: T) => Promise<void>,
): Promise<void> {
  const lane = async (): Promise<void> => {
    for (let chunk = next(); chunk !== undefined; chunk = next()) await work(chunk);
  };
  await Promise.all(Array.from({ length: parallel }, lane));
}

/** Folds SQLite's WAL back into the file; PostgreSQL is vacuumed and analyzed by the runner (seeded-database.ts). */
async function foldWal(db: Db, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'sqlite') return;
  const { sql } = await import('kysely');
  // The registry never runs ANALYZE on SQLite, so neither does the seed: the planner sees what it
  // sees in production. Only fold the WAL back so the server starts from a compact file.
  await sql`pragma wal_checkpoint(truncate)`.execute(db);
}
