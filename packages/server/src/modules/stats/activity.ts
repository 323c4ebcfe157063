import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { countPerDay, type DayCount } from './activity-store.js';
import { STATS_RULES } from '../../kernel/discovery-rules.js';
import { DAY_MS } from '../service-record/service-record-model.js';

export const ACTIVITY_DAYS = 30;

export interface DailyActivity {
  /** UTC date, YYYY-MM-DD. */
  date: string;
  invocations: number;
  reviews: number;
}

export interface Activity {
  days: DailyActivity[];
  updated_at: number;
}

export interface ActivityServiceDeps {
  db: Db;
  clock: Clock;
}

/**
 * Invocations and reviews per UTC day over the last 30 days, for the statistics page. Computed at most
 * once per stats cache period per node (the same freshness as GET /api/stats), so the page never scans
 * the tasks table per request.
 */
export class ActivityService {
  private cached: Activity | undefined;
  private computing: Promise<Activity> | undefined;

  constructor(private readonly deps: ActivityServiceDeps) {}

  async get(): Promise<Activity> {
    const cached = this.cached;
    if (cached !== undefined && this.deps.clock.now() - cached.updated_at < STATS_RULES.cacheMs)
      return cached;
    this.computing ??= this.compute().finally(() => {
      this.computing = undefined;
    });
    return this.computing;
  }

  private async compute(): Promise<Activity> {
    const now = this.deps.clock.now();
    const today = Math.floor(now / DAY_MS);
    const firstDay = today - ACTIVITY_DAYS + 1;
    const [tasks, reviews] = await Promise.all([
      countPerDay(this.deps.db, 'tasks', firstDay * DAY_MS),
      countPerDay(this.deps.db, 'reviews', firstDay * DAY_MS),
    ]);
    const byDay = (counts: DayCount[]) => new Map(counts.map((entry) => [entry.day, entry.count]));
    const taskDays = byDay(tasks);
    const reviewDays = byDay(reviews);
    const days: DailyActivity[] = [];
    for (let day = firstDay; day <= today; day += 1) {
      days.push({
        date: new Date(day * DAY_MS).toISOString().slice(0, 10),
        invocations: taskDays.get(day) ?? 0,
        reviews: reviewDays.get(day) ?? 0,
      });
    }
    this.cached = { days, updated_at: now };
    return this.cached;
  }
}
