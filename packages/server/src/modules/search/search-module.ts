import { SearchIndex } from '@agent-registry/search-index';
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import type { ProfileCache } from '../agents/profile-cache.js';
import type { OperationsMetrics } from '../../telemetry/operations-metrics.js';
import { SearchIndexFollower } from './search-follower.js';
import { SearchService, type OnlineAgents, type SearchCounter, type SearchSource } from './search.js';

export interface SearchModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /** The registry's public URL (home_registry of its own agents). */
  publicUrl: string;
  availability: OnlineAgents;
  profileCache: ProfileCache;
  /** Where each search is counted (the statistics). */
  searches: SearchCounter;
  /** The registry's agents and remote entries together, for scope=federated (federation). */
  federated: SearchSource;
  /** The agents holding a verified domain, for domain= (modules/domains/). */
  domainHolders?: (domain: string) => Promise<string[]>;
  domainsOf?: (dids: readonly string[]) => Promise<ReadonlyMap<string, readonly string[]>>;
  metrics?: { operations: OperationsMetrics };
}

/** Search over an index of all active agents, loaded here before the first request (docs/decisions/search.md, "Where search runs"). */
export async function createSearchModule(deps: SearchModuleDeps): Promise<{ search: SearchService }> {
  const { db, clock, log, profileCache } = deps;
  const searchIndex = new SearchIndexFollower(db, new SearchIndex(), (agents) => {
    // The restored database hands out change numbers again: a cached profile's number proves nothing.
    profileCache.clear();
    deps.metrics?.operations.searchIndexReloaded();
    log.warn(
      { agents },
      'change feed moved backwards (database restored from a backup): search index and profile cache reloaded',
    );
  });
  const indexStarted = Date.now();
  await searchIndex.load();
  log.info({ agents: searchIndex.index.size, ms: Date.now() - indexStarted }, 'search index loaded');
  deps.metrics?.operations.watchSearchIndex(async () => {
    await searchIndex.catchUp();
    return searchIndex.index.size;
  });
  return {
    search: new SearchService({
      db,
      clock,
      searches: deps.searches,
      index: searchIndex,
      availability: deps.availability,
      publicUrl: deps.publicUrl,
      federated: deps.federated,
      ...(deps.domainHolders === undefined ? {} : { domainHolders: deps.domainHolders }),
      ...(deps.domainsOf === undefined ? {} : { domainsOf: deps.domainsOf }),
    }),
  };
}
