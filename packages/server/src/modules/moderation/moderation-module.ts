import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { RegistrationLimiter } from '../agents/registration-limits.js';
import { AppealService } from './appeals.js';
import { ModerationService } from './moderation.js';
import { ReportService } from './reports.js';

export interface ModerationModuleDeps {
  db: Db;
  /** The agents module's writer (group commit on SQLite): a decision is a write of the agent. */
  writes: TransactionRunner;
  clock: Clock;
  config: Config;
}

export interface ModerationModule {
  reports: ReportService;
  moderation: ModerationService;
  appeals: AppealService;
}

/** A network prefix may send this many times an address's reports; an IPv6 /48 twice that. */
const PREFIX_FACTOR = 10;

export function createModerationModule(deps: ModerationModuleDeps): ModerationModule {
  const { db, writes, clock, config } = deps;
  const { didWebDomain, publicUrl } = config.identity;
  const { perAddress, perReporter, windowMs } = config.reports;
  // Counted apart from registrations (own prefix), in the same kind of sliding window.
  const limiter = new RegistrationLimiter(
    {
      perAddress,
      perPrefix: perAddress * PREFIX_FACTOR,
      perIpv6Site: perAddress * PREFIX_FACTOR * 2,
      windowMs,
    },
    { code: 'REPORT_RATE_LIMITED', noun: 'reports', keyPrefix: 'report:' },
  );
  return {
    reports: new ReportService({ db, clock, didWebDomain, limiter, perReporter }),
    moderation: new ModerationService({ db, writes, clock, didWebDomain }),
    appeals: new AppealService({ db, clock, didWebDomain, audience: publicUrl }),
  };
}
