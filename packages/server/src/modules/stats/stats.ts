import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { countActiveAgents } from '../agents/agent-writes-store.js';
import { addToCounter, readCounter } from './counters-store.js';
import { countReviews } from '../reviews/reviews-store.js';
import { STATS_RULES } from '../../kernel/discovery-rules.js';
import type { ExtendedStats, Governance } from './stats-schemas.js';
import type { SearchCounter } from '../search/search.js';

export interface StatsServiceDeps {
  db: Db;
  clock: Clock;
  governance: Governance;
}

const SEARCHES = 'searches';

/**
 * Platform statistics, computed at most once per 60 s per node. Searches are counted in memory and
 * added to the shared `registry_counters` row by `flushSearches` (a timer, shutdown, and before each
 * recomputation), so a search never waits on a database write.
 */
export class StatsService implements SearchCounter {
  private pendingSearches = 0;
  private cached: ExtendedStats | undefined;
  private computing: Promise<ExtendedStats> | undefined;

  constructor(private readonly deps: StatsServiceDeps) {}

  recordSearch(): void {
    this.pendingSearches += 1;
  }

  async flushSearches(): Promise<void> {
    const amount = this.pendingSearches;
    if (amount === 0) return;
    this.pendingSearches = 0;
    try {
      await addToCounter(this.deps.db, SEARCHES, amount);
    } catch (error) {
      this.pendingSearches += amount;
      throw error;
    }
  }

  /** The cached statistics and how many more seconds they stay fresh. */
  async get(): Promise<{ stats: ExtendedStats; maxAgeSeconds: number }> {
    const now = this.deps.clock.now();
    let stats = this.cached;
    if (stats === undefined || now - stats.updated_at >= STATS_RULES.cacheMs) {
      // One recomputation at a time; concurrent requests share it.
      this.computing ??= this.compute().finally(() => {
        this.computing = undefined;
      });
      stats = await this.computing;
    }
    const age = this.deps.clock.now() - stats.updated_at;
    return { stats, maxAgeSeconds: Math.max(0, Math.ceil((STATS_RULES.cacheMs - age) / 1000)) };
  }

  private async compute(): Promise<ExtendedStats> {
    await this.flushSearches();
    const { db } = this.deps;
    const [agentsCount, reviewsCount, searchesCount] = await Promise.all([
      countActiveAgents(db),
      countReviews(db),
      readCounter(db, SEARCHES),
    ]);
    this.cached = {
      agents_count: agentsCount,
      reviews_count: reviewsCount,
      searches_count: searchesCount,
      governance: this.deps.governance,
      updated_at: this.deps.clock.now(),
    };
    return this.cached;
  }
}
