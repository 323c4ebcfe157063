import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import { every } from '../../kernel/periodic.js';
import type { Db } from '../../db/connect.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { ReputationService } from './reputation.js';
import { ReviewService } from './reviews.js';

/** Another periodic recomputation that slides with reputation's decay (the service record's window). */
export interface AlsoRefreshed {
  refreshAll(signal: AbortSignal): Promise<unknown>;
}

export interface ReviewsModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  telemetry: Telemetry;
  config: Config;
  lifecycle: Lifecycle;
  alsoRefreshed: AlsoRefreshed;
}

export interface ReviewsModule {
  reviews: ReviewService;
  reputation: ReputationService;
  /** The periodic reputation refresh, stopped by the lifecycle. */
  startJobs(): void;
}

export function createReviewsModule(deps: ReviewsModuleDeps): ReviewsModule {
  const { db, clock, log, telemetry, config, lifecycle } = deps;
  const { didWebDomain } = config.identity;
  const reputation = new ReputationService({ db, clock, didWebDomain });
  const rateLimit = {
    maxReviews: config.reviews.rateLimit,
    windowMs: config.reviews.rateWindowSeconds * 1000,
  };
  return {
    reviews: new ReviewService({ db, telemetry, clock, didWebDomain, reputation, rateLimit }),
    reputation,
    startJobs: () => {
      lifecycle.add(
        'reputation refresh',
        every(
          config.reviews.reputationRefreshSeconds * 1000,
          // The service record's 30-day window slides on the same schedule as reputation decays.
          async (signal) => {
            await reputation.refreshAll(signal);
            await deps.alsoRefreshed.refreshAll(signal);
          },
          (error) => log.error({ err: error, job: 'reputation-refresh' }, 'background job failed'),
        ),
        (job) => job.stop(),
      );
    },
  };
}
