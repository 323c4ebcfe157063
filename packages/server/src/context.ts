import { loadSigningKey } from './auth/signing-key.js';
import { TokenService } from './auth/tokens.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/connect.js';
import { migrateToLatest } from './db/migrations/index.js';
import { AgentService } from './services/agents.js';
import { AuthenticationService } from './services/authentication.js';
import { DidResolutionService } from './services/did-resolution.js';
import { RegistrationService } from './services/registration.js';
import { startDiscoveryJobs } from './services/background-jobs.js';
import { registryGovernance } from './services/governance.js';
import { ReputationService } from './services/reputation.js';
import { ReviewService } from './services/reviews.js';
import { SearchService } from './services/search.js';
import { StatsService } from './services/stats.js';

/** Everything a request may need, built once here: the composition root. */
export interface AppContext {
  config: Config;
  clock: Clock;
  database: DatabaseHandle;
  tokens: TokenService;
  registration: RegistrationService;
  authentication: AuthenticationService;
  agents: AgentService;
  didResolution: DidResolutionService;
  reviews: ReviewService;
  reputation: ReputationService;
  search: SearchService;
  stats: StatsService;
  close(): Promise<void>;
}

export interface ContextOverrides {
  clock?: Clock;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const clock = overrides.clock ?? systemClock;
  const database = openDatabase(config.database);
  try {
    await migrateToLatest(database.db);
    const privateKey = await loadSigningKey(database.db, clock, config.tokenSigningKey);
    const tokens = await TokenService.create({
      privateKey,
      issuer: config.publicUrl,
      ttlSeconds: config.tokenTtlSeconds,
      clock,
    });
    const { db } = database;
    const { didWebDomain, publicUrl } = config;
    const reputation = new ReputationService({ db, clock, didWebDomain });
    const stats = new StatsService({ db, clock, governance: registryGovernance(config) });
    const rateLimit = { maxReviews: config.reviewRateLimit, windowMs: config.reviewRateWindowSeconds * 1000 };
    // Timers belong to the context: reputation refresh and search-count flush, stopped by close().
    const discoveryJobs = startDiscoveryJobs({ config, reputation, stats });
    return {
      config,
      clock,
      database,
      tokens,
      registration: new RegistrationService({ db, clock, tokens, didWebDomain }),
      authentication: new AuthenticationService({ db, clock, tokens, didWebDomain }),
      agents: new AgentService({ db, clock, didWebDomain, publicUrl }),
      didResolution: new DidResolutionService({ db, didWebDomain, publicUrl }),
      reviews: new ReviewService({ db, clock, didWebDomain, reputation, rateLimit }),
      reputation,
      search: new SearchService({ db, searches: stats }),
      stats,
      close: async () => {
        await discoveryJobs.stop();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
