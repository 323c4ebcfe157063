import { SearchIndex } from '@agent-registry/search-index';
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import { SEARCH_RULES } from '../../kernel/discovery-rules.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import { every } from '../../kernel/periodic.js';
import type { Db } from '../../db/connect.js';
import type { AvailabilityService } from '../availability/availability.js';
import type { ProfileCache } from '../agents/profile-cache.js';
import { ActivityService } from './activity.js';
import { ChangeFeedService } from './change-feed.js';
import { registryGovernance } from './governance.js';
import { SearchIndexFollower } from './search-follower.js';
import { SearchService, type SearchSource } from './search.js';
import { StatsService } from './stats.js';

export interface DiscoveryModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Config;
  lifecycle: Lifecycle;
  availability: AvailabilityService;
  profileCache: ProfileCache;
  /** The registry's agents and remote entries together, for scope=federated (federation). */
  federated: SearchSource;
}

export interface DiscoveryModule {
  search: SearchService;
  changeFeed: ChangeFeedService;
  stats: StatsService;
  activity: ActivityService;
  /** The periodic flush of search counts (and a last one at stop), stopped by the lifecycle. */
  startJobs(): void;
}

/** Search over an index of all active agents, loaded here before the first request (docs/decisions.md, "Where search runs"). */
export async function createDiscoveryModule(deps: DiscoveryModuleDeps): Promise<DiscoveryModule> {
  const { db, clock, log, config, lifecycle, profileCache } = deps;
  const stats = new StatsService({ db, clock, governance: registryGovernance(config) });
  const searchIndex = new SearchIndexFollower(db, new SearchIndex(), (agents) => {
    // The restored database hands out change numbers again: a cached profile's number proves nothing.
    profileCache.clear();
    log.warn(
      { agents },
      'change feed moved backwards (database restored from a backup): search index and profile cache reloaded',
    );
  });
  const indexStarted = Date.now();
  await searchIndex.load();
  log.info({ agents: searchIndex.index.size, ms: Date.now() - indexStarted }, 'search index loaded');
  const { publicUrl } = config.identity;
  return {
    search: new SearchService({
      db,
      clock,
      searches: stats,
      index: searchIndex,
      availability: deps.availability,
      publicUrl,
      federated: deps.federated,
    }),
    changeFeed: new ChangeFeedService({ db, publicUrl }),
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
