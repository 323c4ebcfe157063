import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import { every } from '../../kernel/periodic.js';
import type { Db } from '../../db/connect.js';
import { ActivityService } from './activity.js';
import { registryGovernance } from './governance.js';
import { StatsService } from './stats.js';

export interface StatsModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Config;
  lifecycle: Lifecycle;
}

export interface StatsModule {
  stats: StatsService;
  activity: ActivityService;
  /** The periodic flush of search counts (and a last one at stop), stopped by the lifecycle. */
  startJobs(): void;
}

export function createStatsModule(deps: StatsModuleDeps): StatsModule {
  const { db, clock, log, config, lifecycle } = deps;
  const stats = new StatsService({ db, clock, governance: registryGovernance(config) });
  return {
    stats,
    activity: new ActivityService({ db, clock }),
    startJobs: () => {
      const onError = (error: unknown): void =>
        log.error({ err: error, job: 'search-count-flush' }, 'background job failed');
      lifecycle.add(
        'search count flush',
        every(SEARCH_RULES.countFlushMs, () => stats.flushSearches(), onError),
        async (job) => {
          await job.stop();
          await stats.flushSearches().catch(onError);
        },
      );
    },
  };
}
