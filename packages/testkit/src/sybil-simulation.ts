/**
 * The Sybil simulation behind `npm run bench -- --only sybil` and the server's test/unit/sybil.test.ts: an honest
 * population of agents and callers with realistic ratings, built through the real services on a real
 * SQLite database, then attacks by rings of fresh identities, each on its own copy of that database.
 * Reports, for reputation v1 and v2 side by side, how far each attack moves its victim's score and rank,
 * and how well honest agents' order follows their true quality (Spearman rank correlation).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { createContext, type AppContext } from '@agent-registry/server/src/context.js';
import type { Clock } from '@agent-registry/server/src/kernel/clock.js';
import { loadConfig } from '@agent-registry/server/src/kernel/config.js';
import type { RegisterCommand } from '@agent-registry/server/src/modules/agents/schemas.js';
import { aggregateReviewsV1 } from '@agent-registry/server/src/modules/reviews/reputation-model.js';
import { ed25519Agent, registrationBody, type Profile } from './agents.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const CAPABILITY = 'translation';

export interface SybilOptions {
  honestAgents: number;
  honestCallers: number;
  ringSizes: readonly number[];
  /** Also run the ring that registered 45 days before attacking (beyond the fresh rings). */
  agedRing?: boolean;
  /** PRNG seed: the same seed gives the same population and the same table. */
  seed?: number;
  log?: (line: string) => void;
}

export type AttackKind = 'praise' | 'praise-verified' | 'smear' | 'praise-verified-aged';

export interface AttackResult {
  attack: AttackKind;
  ring: number;
  victim: 'target' | 'competitor';
  v1: { before: number; after: number; rankBefore: number; rankAfter: number };
  v2: { before: number; after: number; rankBefore: number; rankAfter: number };
}

export interface SybilReport {
  honestAgents: number;
  honestCallers: number;
  reviews: number;
  verifiedShare: number;
  /** Ranks counted among the honest agents plus the victim (all offer one capability); 1 is best. */
  topTenPercentRank: number;
  spearmanV1: number;
  spearmanV2: number;
  attacks: AttackResult[];
}

class SimClock implements Clock {
  constructor(public current: number) {}
  now(): number {
    return this.current;
  }
}

/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

export function spearman(a: readonly number[], b: readonly number[]): number {
  const ranks = (values: readonly number[]) => {
    const order = values.map((value, index) => ({ value, index })).sort((x, y) => x.value - y.value);
    const result = new Array<number>(values.length);
    for (let i = 0; i < order.length;) {
      let j = i;
      while (j + 1 < order.length && order[j + 1]!.value === order[i]!.value) j += 1;
      for (let k = i; k <= j; k += 1) result[order[k]!.index] = (i + j) / 2 + 1;
      i = j + 1;
    }
    return result;
  };
  const ra = ranks(a);
  const rb = ranks(b);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const ma = mean(ra);
  const mb = mean(rb);
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < ra.length; i += 1) {
    num += (ra[i]! - ma) * (rb[i]! - mb);
    da += (ra[i]! - ma) ** 2;
    db += (rb[i]! - mb) ** 2;
  }
  return num / Math.sqrt(da * db);
}

interface World {
  ctx: AppContext;
  clock: SimClock;
}

async function openWorld(file: string, now: number): Promise<World> {
  const clock = new SimClock(now);
  const config = loadConfig({
    DATABASE_URL: `sqlite:${file}`,
    PUBLIC_URL: 'http://localhost:8080',
    LOG_LEVEL: 'silent',
    REVIEW_RATE_LIMIT: '100000',
    REGISTRATION_RATE_LIMIT: '1000000',
    REGISTRATION_PREFIX_RATE_LIMIT: '1000000',
  });
  return { ctx: await createContext(config, { clock }), clock };
}

const profile = (name: string): Profile => ({
  name,
  description: `${name} (simulated)`,
  capabilities: [{ type: CAPABILITY }],
  tags: [],
});

async function registerAgent(world: World, name: string): Promise<string> {
  const body = await registrationBody(ed25519Agent(), profile(name), world.clock.now());
  return (await world.ctx.registration.register(body as unknown as RegisterCommand, { address: '127.0.0.1' }))
    .did;
}

/** A brokered call: the task row the broker writes, then the target's own result or fail (the real terminal path). */
async function call(world: World, caller: string, target: string, succeeds: boolean): Promise<string> {
  const id = uuidv7();
  const now = world.clock.now();
  await world.ctx.database.db
    .insertInto('tasks')
    .values({
      id,
      caller_did: caller,
      target_did: target,
      capability: CAPABILITY,
      input: '{}',
      status: 'pending',
      delivery_mode: 'queue',
      output: null,
      error: null,
      error_code: null,
      created_at: now,
      deadline_at: now + 30_000,
      accepted_at: null,
      completed_at: null,
    })
    .execute();
  world.clock.current += 200;
  if (succeeds) await world.ctx.agentTasks.result({ did: target }, id, { ok: true });
  else await world.ctx.agentTasks.fail({ did: target }, id, 'could not do it');
  return id;
}

async function review(world: World, reviewer: string, target: string, rating: number, callId?: string) {
  await world.ctx.reviews.submit(
    { did: reviewer },
    { target_did: target, rating: Math.round(rating * 100) / 100, call_record_id: callId ?? null },
  );
}

interface Scores {
  v1: Map<string, number>;
  v2: Map<string, number>;
}

async function scores(world: World, dids: readonly string[]): Promise<Scores> {
  const db = world.ctx.database.db;
  // Standing feeds on other scores: a few refresh passes settle it.
  for (let pass = 0; pass < 3; pass += 1) await world.ctx.reputation.refreshAll();
  const stored = await db.selectFrom('agents').select(['did', 'reputation_score']).execute();
  const v2 = new Map(stored.map((row) => [row.did, row.reputation_score]));
  const reviews = await db
    .selectFrom('reviews')
    .select(['target_did', 'rating', 'verified', 'created_at'])
    .execute();
  const byTarget = new Map<string, { rating: number; verified: boolean; createdAt: number }[]>();
  for (const row of reviews) {
    const list = byTarget.get(row.target_did) ?? [];
    list.push({ rating: row.rating, verified: row.verified === 1, createdAt: Number(row.created_at) });
    byTarget.set(row.target_did, list);
  }
  const now = world.clock.now();
  const v1 = new Map(
    dids.map((did) => [did, aggregateReviewsV1(byTarget.get(did) ?? [], now).reputation_score]),
  );
  return { v1, v2: new Map(dids.map((did) => [did, v2.get(did) ?? 0])) };
}

/** 1-based rank of `did` among `dids` by score (ties: the victim counts as behind). */
function rankOf(did: string, dids: readonly string[], score: Map<string, number>): number {
  const mine = score.get(did) ?? 0;
  return 1 + dids.filter((other) => other !== did && (score.get(other) ?? 0) >= mine).length;
}

export async function runSybilSimulation(options: SybilOptions): Promise<SybilReport> {
  const log = options.log ?? (() => undefined);
  const random = prng(options.seed ?? 17);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sybil-'));
  try {
    const baseFile = path.join(dir, 'honest.db');
    const start = Date.now() - 400 * DAY_MS;
    const world = await openWorld(baseFile, start);

    // Honest agents, registered early, each with a true quality: how often it succeeds and how it is rated.
    const agents: { did: string; quality: number }[] = [];
    for (let i = 0; i < options.honestAgents; i += 1) {
      agents.push({ did: await registerAgent(world, `Honest agent ${i}`), quality: 0.15 + 0.8 * random() });
    }
    // Honest callers join over the first 300 days; each calls 3-8 agents over the following months and
    // reviews most of them: rating = 1 + 9 * quality + noise, verified when it cites its completed call.
    const callers: { did: string; joined: number }[] = [];
    for (let i = 0; i < options.honestCallers; i += 1) {
      world.clock.current = start + Math.floor(random() * 300) * DAY_MS + i;
      callers.push({ did: await registerAgent(world, `Honest caller ${i}`), joined: world.clock.current });
    }
    const events: { at: number; caller: string; agent: { did: string; quality: number } }[] = [];
    for (const caller of callers) {
      const count = 3 + Math.floor(random() * 6);
      const chosen = new Set<number>();
      while (chosen.size < Math.min(count, agents.length)) chosen.add(Math.floor(random() * agents.length));
      for (const index of chosen) {
        const at = caller.joined + Math.floor(random() * 90 * DAY_MS);
        events.push({ at, caller: caller.did, agent: agents[index]! });
      }
    }
    events.sort((a, b) => a.at - b.at);
    let reviews = 0;
    let verified = 0;
    for (const event of events) {
      world.clock.current = Math.max(world.clock.current, event.at);
      let lastCompleted: string | undefined;
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const id = await call(world, event.caller, event.agent.did, random() < 0.5 + event.agent.quality / 2);
        const task = await world.ctx.database.db
          .selectFrom('tasks')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirst();
        if (task?.status === 'completed') lastCompleted = id;
      }
      if (random() < 0.15) continue; // not every caller leaves a review
      const rating = Math.min(10, Math.max(1, 1 + 9 * event.agent.quality + gaussian(random) * 1.2));
      const cite = lastCompleted !== undefined && random() < 0.8 ? lastCompleted : undefined;
      await review(world, event.caller, event.agent.did, rating, cite);
      reviews += 1;
      if (cite !== undefined) verified += 1;
    }
    world.clock.current = start + 400 * DAY_MS;
    const honestDids = agents.map((agent) => agent.did);
    const baseline = await scores(world, honestDids);
    const quality = agents.map((agent) => agent.quality);
    const report: SybilReport = {
      honestAgents: agents.length,
      honestCallers: callers.length,
      reviews,
      verifiedShare: reviews === 0 ? 0 : verified / reviews,
      topTenPercentRank: Math.max(1, Math.ceil(agents.length * 0.1)),
      spearmanV1: spearman(
        quality,
        honestDids.map((did) => baseline.v1.get(did) ?? 0),
      ),
      spearmanV2: spearman(
        quality,
        honestDids.map((did) => baseline.v2.get(did) ?? 0),
      ),
      attacks: [],
    };
    const snapshot = path.join(dir, 'snapshot.db');
    await sql`vacuum into ${snapshot}`.execute(world.ctx.database.db);
    const now = world.clock.now();
    await world.ctx.close();
    log(`honest population: ${agents.length} agents, ${callers.length} callers, ${reviews} reviews`);

    // Victims: the agent of median quality (praised) and the second best (smeared).
    const byQuality = [...agents].sort((a, b) => b.quality - a.quality);
    const target = byQuality[Math.floor(byQuality.length / 2)]!.did;
    const competitor = byQuality[1]!.did;

    for (const ring of options.ringSizes) {
      const attacks: AttackKind[] = ['praise', 'praise-verified', 'smear'];
      if (options.agedRing === true) attacks.push('praise-verified-aged');
      for (const attack of attacks) {
        const file = path.join(dir, `${attack}-${ring}.db`);
        fs.copyFileSync(snapshot, file);
        const attacked = await openWorld(file, now);
        try {
          const victim = attack === 'smear' ? competitor : target;
          const members: string[] = [];
          const aged = attack === 'praise-verified-aged';
          // The aged ring registers (and builds its partners) 45 days before it attacks.
          if (aged) attacked.clock.current = now - 45 * DAY_MS;
          for (let i = 0; i < ring; i += 1) members.push(await registerAgent(attacked, `Ring ${i}`));
          if (attack !== 'praise' && attack !== 'smear') {
            // The ring looks busy: each member calls three others (so it has "partners"), and the
            // attacker's own target completes a call from every member, which verifies the reviews.
            for (const [index, member] of members.entries()) {
              for (let k = 1; k <= 3 && ring > 1; k += 1) {
                await call(attacked, member, members[(index + k * 7) % ring]!, true);
              }
            }
          }
          attacked.clock.current = Math.max(attacked.clock.current, now);
          for (const member of members) {
            const callId =
              attack === 'praise' || attack === 'smear'
                ? undefined
                : await call(attacked, member, victim, true);
            await review(attacked, member, victim, attack === 'smear' ? 1 : 10, callId);
          }
          const after = await scores(attacked, honestDids);
          const measure = (version: 'v1' | 'v2') => ({
            before: baseline[version].get(victim) ?? 0,
            after: after[version].get(victim) ?? 0,
            rankBefore: rankOf(victim, honestDids, baseline[version]),
            rankAfter: rankOf(victim, honestDids, after[version]),
          });
          report.attacks.push({
            attack,
            ring,
            victim: attack === 'smear' ? 'competitor' : 'target',
            v1: measure('v1'),
            v2: measure('v2'),
          });
          log(`attack ${attack} by ${ring}: done`);
        } finally {
          await attacked.ctx.close();
        }
      }
    }
    return report;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The report as a Markdown table (bench/RESULTS.md). */
export function sybilTable(report: SybilReport): string {
  const lines = [
    `Honest population: ${report.honestAgents} agents offering one capability, ${report.honestCallers} callers, ${report.reviews} reviews (${Math.round(report.verifiedShare * 100)} % verified). Top 10 % = rank 1-${report.topTenPercentRank}.`,
    '',
    `Rank correlation (Spearman) of honest agents' scores with their true quality: v1 ${report.spearmanV1.toFixed(3)}, v2 ${report.spearmanV2.toFixed(3)}.`,
    '',
    '| Attack | Ring | Victim | v1 score before -> after (change) | v1 rank | v2 score before -> after (change) | v2 rank |',
    '| ------ | ---: | ------ | --------------------------------- | ------- | --------------------------------- | ------- |',
  ];
  const fmt = (m: AttackResult['v1']) =>
    `${m.before.toFixed(2)} -> ${m.after.toFixed(2)} (${m.after - m.before >= 0 ? '+' : ''}${(m.after - m.before).toFixed(2)})`;
  for (const row of report.attacks) {
    lines.push(
      `| ${row.attack} | ${row.ring} | ${row.victim} | ${fmt(row.v1)} | ${row.v1.rankBefore} -> ${row.v1.rankAfter} | ${fmt(row.v2)} | ${row.v2.rankBefore} -> ${row.v2.rankAfter} |`,
    );
  }
  return lines.join('\n');
}
