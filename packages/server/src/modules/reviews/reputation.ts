import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { findAgent } from '../agents/agents-store.js';
import { stampAgentChange } from '../agents/change-feed-store.js';
import {
  agentsWithReviews,
  lockAgentRows,
  ratingBuckets,
  evidencedRatingsOf,
  writeReputation,
} from './reviews-store.js';
import { agentNotFound } from '../../kernel/errors.js';
import { requireDid } from '../identity/did-param.js';
import { aggregateReviews, type ReputationAggregates } from './reputation-model.js';
import type { ReputationStats } from './schemas.js';

type RatingDistribution = ReputationStats['rating_distribution'];

export interface ReputationDeps {
  db: Db;
  clock: Clock;
  didWebDomain: string;
}

const REFRESH_BATCH = 200;

/**
 * Owns the stored aggregates (agents.average_rating, reputation_score, total_reviews). They are only
 * ever written by `recompute`, from the reviews rows, inside the transaction that changed a review or
 * by the periodic refresh; every endpoint reads the stored values, so profile, search and reputation
 * always agree.
 */
export class ReputationService {
  constructor(private readonly deps: ReputationDeps) {}

  /** Stored aggregates and the live distribution, read in one transaction so their counts agree. */
  async get(rawDid: string | undefined): Promise<ReputationStats> {
    const did = requireDid(rawDid, this.deps.didWebDomain).did;
    return this.deps.db.transaction().execute(async (trx) => {
      const agent = await findAgent(trx, did);
      if (agent === undefined) throw agentNotFound(did);
      const distribution = emptyDistribution();
      let verified = 0;
      for (const bucket of await ratingBuckets(trx, did)) {
        distribution[String(bucket.bucket) as keyof RatingDistribution] = bucket.count;
        verified += bucket.verified;
      }
      return {
        did,
        reputation_score: agent.reputation_score,
        average_rating: agent.average_rating,
        rating_distribution: distribution,
        total_reviews: agent.total_reviews,
        verified_reviews: verified,
      };
    });
  }

  /**
   * Recomputes and stores an agent's aggregates; call inside a transaction that holds its row lock,
   * as its last step (a change is stamped in the change feed, whose lock is taken last).
   */
  async recompute(trx: Db, did: string, now: number): Promise<ReputationAggregates> {
    const aggregates = aggregateReviews(await evidencedRatingsOf(trx, did), now);
    await writeReputation(trx, did, aggregates);
    return aggregates;
  }

  /**
   * Time decay makes stored scores drift toward the prior as reviews age; this recomputes every
   * reviewed agent, a batch per transaction, yielding between batches. Returns how many it refreshed.
   */
  async refreshAll(signal?: AbortSignal): Promise<number> {
    let after = '';
    let refreshed = 0;
    while (signal?.aborted !== true) {
      const dids = await agentsWithReviews(this.deps.db, after, REFRESH_BATCH);
      if (dids.length === 0) break;
      const now = this.deps.clock.now();
      await this.deps.db.transaction().execute(async (trx) => {
        const changed: string[] = [];
        for (const did of dids) {
          await lockAgentRows(trx, [did]);
          const aggregates = aggregateReviews(await evidencedRatingsOf(trx, did), now);
          if (await writeReputation(trx, did, aggregates, false)) changed.push(did);
        }
        // The change feed's lock after every agent row lock, as in every other transaction:
        // stamping inside the loop deadlocked with a review holding a later agent's row.
        for (const did of changed) await stampAgentChange(trx, did, 'reputation');
      });
      refreshed += dids.length;
      after = dids[dids.length - 1] as string;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return refreshed;
  }
}

function emptyDistribution(): RatingDistribution {
  return { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0, '6': 0, '7': 0, '8': 0, '9': 0, '10': 0 };
}
