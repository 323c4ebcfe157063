import { every, type BackgroundJobs } from './kernel/periodic.js';
import type { Config } from './kernel/config.js';
import { SEARCH_RULES } from './kernel/discovery-rules.js';
import type { ReputationService } from './modules/reviews/reputation.js';
import type { ServiceRecordService } from './modules/service-record/service-record.js';
import type { StatsService } from './modules/stats/stats.js';

export interface DiscoveryJobsDeps {
  config: Config;
  reputation: ReputationService;
  serviceRecord: ServiceRecordService;
  stats: StatsService;
  onError: (job: string, error: unknown) => void;
}

/**
 * Timers owned by the context (created in createContext, stopped by ctx.close()): the periodic
 * reputation refresh and the search-count flush. Unref'd, so they never keep the process alive.
 */
export function startDiscoveryJobs(deps: DiscoveryJobsDeps): BackgroundJobs {
  const { onError } = deps;
  const jobs = [
    every(
      deps.config.reputationRefreshSeconds * 1000,
      // The service record's 30-day window slides on the same schedule as reputation decays.
      async (signal) => {
        await deps.reputation.refreshAll(signal);
        await deps.serviceRecord.refreshAll(signal);
      },
      (error) => onError('reputation-refresh', error),
    ),
    every(
      SEARCH_RULES.countFlushMs,
      () => deps.stats.flushSearches(),
      (error) => onError('search-count-flush', error),
    ),
  ];
  return {
    stop: async () => {
      await Promise.all(jobs.map((job) => job.stop()));
      await deps.stats.flushSearches().catch((error: unknown) => onError('search-count-flush', error));
    },
  };
}
