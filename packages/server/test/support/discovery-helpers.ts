import { v7 as uuidv7 } from 'uuid';
import type { TaskStatus } from '../../src/db/schema/index.js';
import { agentPath, bearer, ed25519Agent, type Profile } from '@agent-registry/testkit';
import { register, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';

export const DAY_MS = 24 * 60 * 60 * 1000;

export const profileOf = (name: string, overrides: Partial<Profile> = {}): Profile => ({
  name,
  description: `${name} description`,
  capabilities: [{ type: 'general' }],
  tags: [],
  ...overrides,
});

export async function registerNamed(
  registry: TestRegistry,
  name: string,
  overrides: Partial<Profile> = {},
): Promise<Registered> {
  return register(registry, ed25519Agent(), profileOf(name, overrides));
}

/** Registers `count` reviewers one after another (each registration is its own signed request). */
export async function registerReviewers(registry: TestRegistry, count: number): Promise<Registered[]> {
  const reviewers: Registered[] = [];
  for (let index = 0; index < count; index += 1) {
    reviewers.push(await registerNamed(registry, `Reviewer ${index}`));
  }
  return reviewers;
}

export interface ReviewBody {
  target_did?: unknown;
  rating?: unknown;
  comment?: unknown;
  call_record_id?: unknown;
}

export const submitReview = (registry: TestRegistry, token: string | undefined, payload: ReviewBody) =>
  registry.app.inject({
    method: 'POST',
    url: '/api/reviews',
    headers: token === undefined ? {} : bearer(token),
    payload: payload as Record<string, unknown>,
  });

export const editReview = (
  registry: TestRegistry,
  token: string | undefined,
  reviewId: string,
  payload: Record<string, unknown>,
) =>
  registry.app.inject({
    method: 'PUT',
    url: `/api/reviews/${encodeURIComponent(reviewId)}`,
    headers: token === undefined ? {} : bearer(token),
    payload,
  });

export const getJson = (registry: TestRegistry, url: string, token?: string) =>
  registry.app.inject({ method: 'GET', url, headers: token === undefined ? {} : bearer(token) });

/** A row in the tasks table, as the invocation broker would leave it; returns its task_id. */
export async function insertTask(
  registry: TestRegistry,
  callerDid: string,
  targetDid: string,
  status: TaskStatus = 'completed',
): Promise<string> {
  const id = uuidv7();
  const now = registry.clock.now();
  await registry.ctx.database.db
    .insertInto('tasks')
    .values({
      id,
      caller_did: callerDid,
      target_did: targetDid,
      capability: 'translation',
      input: '{}',
      status,
      delivery_mode: 'queue',
      output: status === 'completed' ? '{"ok":true}' : null,
      error: status === 'failed' ? 'boom' : null,
      created_at: now,
      deadline_at: now + 30_000,
      accepted_at: status === 'pending' ? null : now,
      completed_at: status === 'completed' || status === 'failed' ? now : null,
    })
    .execute();
  return id;
}

export interface ReviewJson {
  review_id: string;
  reviewer_did: string;
  target_did: string;
  rating: number;
  comment: string | null;
  created_at: number;
  updated_at: number;
  is_edited: boolean;
  edit_count: number;
  verified: boolean;
}

export interface Aggregates {
  reputation_score: number;
  average_rating: number;
  total_reviews: number;
}

/**
 * The formula of docs/reputation.md written out again, independently of the service: ratings on
 * 0-100, weight (verified ? 2 : 1) * e^(-age_days/180), a prior of weight 3 at 50.
 */
/**
 * Reputation v2 written out independently of src/modules/reviews/reputation-model.ts, for reviews whose
 * reviewers all have the same `trust` and called no other agent, so every review is unproven
 * (docs/reputation.md): weight = (verified ? 2 : 1) * decay * trust, all scaled together to at most 1.
 */
export function expectedAggregates(
  reviews: readonly { rating: number; verified: boolean; created_at: number }[],
  now: number,
  trust: number,
): Aggregates {
  if (reviews.length === 0) return { reputation_score: 0, average_rating: 0, total_reviews: 0 };
  const weightOf = (review: { verified: boolean; created_at: number }) =>
    (review.verified ? 2 : 1) * Math.exp(-(now - review.created_at) / DAY_MS / 180) * trust;
  const unproven = reviews.reduce((sum, review) => sum + weightOf(review), 0);
  const scale = unproven > 1 ? 1 / unproven : 1;
  let numerator = 3 * 50;
  let denominator = 3;
  let sumHundredths = 0;
  for (const review of reviews) {
    const weight = weightOf(review) * scale;
    numerator += weight * ((review.rating - 1) / 9) * 100;
    denominator += weight;
    sumHundredths += Math.round(review.rating * 100);
  }
  return {
    reputation_score: Math.round((numerator / denominator) * 100) / 100,
    average_rating: Math.round(sumHundredths / reviews.length) / 100,
    total_reviews: reviews.length,
  };
}

/** Trust of a reviewer at least 30 days old that called no other agent and has no reviews: 1 * 0.25 * 0.75. */
export const MATURE_LONE_REVIEWER_TRUST = 0.1875;

/** Registers reviewers, then lets 30 days pass so they carry full maturity; returns them with fresh tokens. */
export async function registerMatureReviewers(registry: TestRegistry, count: number): Promise<Registered[]> {
  const reviewers = await registerReviewers(registry, count);
  registry.clock.advance(30 * DAY_MS);
  return Promise.all(
    reviewers.map(async (reviewer) => ({
      ...reviewer,
      token: (await registry.ctx.tokens.issue(reviewer.did)).token,
    })),
  );
}

/** Every review of an agent through the public list endpoint (pages of 100). */
export async function allReviewsOf(registry: TestRegistry, did: string): Promise<ReviewJson[]> {
  const reviews: ReviewJson[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = (await getJson(registry, agentPath(did, `/reviews?limit=100&offset=${offset}`))).json<{
      reviews: ReviewJson[];
      total: number;
    }>();
    reviews.push(...page.reviews);
    if (reviews.length >= page.total || page.reviews.length === 0) return reviews;
  }
}

/** The aggregates as the profile, search (found by q = its unique name) and reputation endpoints show them. */
export async function aggregatesEverywhere(
  registry: TestRegistry,
  did: string,
  uniqueName: string,
): Promise<{ profile: Aggregates; search: Aggregates; reputation: Aggregates }> {
  const pick = (value: Aggregates): Aggregates => ({
    reputation_score: value.reputation_score,
    average_rating: value.average_rating,
    total_reviews: value.total_reviews,
  });
  const profile = (await getJson(registry, agentPath(did))).json<Aggregates>();
  const search = (await getJson(registry, `/api/agents/search?q=${encodeURIComponent(uniqueName)}`)).json<{
    agents: (Aggregates & { did: string })[];
  }>();
  const found = search.agents.find((agent) => agent.did === did);
  if (found === undefined) throw new Error(`search for ${uniqueName} did not find ${did}`);
  const reputation = (await getJson(registry, agentPath(did, '/reputation'))).json<Aggregates>();
  return { profile: pick(profile), search: pick(found), reputation: pick(reputation) };
}

/** A second registry node on the same database file and clock, as a load-balanced deployment runs. */
export async function startSecondNode(registry: TestRegistry): Promise<{
  app: TestRegistry['app'];
  ctx: TestRegistry['ctx'];
  close(): Promise<void>;
}> {
  const { createContext } = await import('../../src/context.js');
  const { buildApp } = await import('../../src/app.js');
  const ctx = await createContext(registry.config, { clock: registry.clock });
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return {
    app,
    ctx,
    close: async () => {
      await app.close();
      await ctx.close();
    },
  };
}

/** A token valid at the registry clock's current time (tokens live 24 h; tests move the clock by months). */
export async function freshToken(registry: TestRegistry, did: string): Promise<string> {
  return (await registry.ctx.tokens.issue(did)).token;
}
