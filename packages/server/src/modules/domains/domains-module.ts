import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { every } from '../../kernel/periodic.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { RegistrationLimiter } from '../agents/registration-limits.js';
import { DomainProver } from './domain-proof.js';
import { DomainService } from './domains.js';

export interface DomainsModuleDeps {
  db: Db;
  /** The agents module's writer: a claim stamps the agent's profile. */
  writes: TransactionRunner;
  clock: Clock;
  log: Logger;
  config: Config;
  lifecycle: Lifecycle;
  /** The webhooks' network policy, which proof fetches go through. */
  policy: WebhookNetworkPolicy;
}

export interface DomainsModule {
  domains: DomainService;
  /** The re-check of verified domains; stopped by the lifecycle. */
  startJobs(): void;
}

/** How often due claims are looked for: at most this late after DOMAIN_RECHECK_SECONDS. */
const RECHECK_SWEEP_MS = 60_000;

export function createDomainsModule(deps: DomainsModuleDeps): DomainsModule {
  const { config } = deps;
  const settings = config.identity.domains;
  const registration = config.registration;
  const limiter = new RegistrationLimiter(
    {
      perAddress: registration.rateLimit,
      perPrefix: registration.prefixRateLimit,
      perIpv6Site: registration.ipv6SiteRateLimit,
      windowMs: registration.rateWindowSeconds * 1000,
    },
    { code: 'IDENTITY_CLAIM_RATE_LIMITED', noun: 'domain claims and handle changes', keyPrefix: 'claim:' },
  );
  const domains = new DomainService({
    db: deps.db,
    writes: deps.writes,
    clock: deps.clock,
    didWebDomain: config.identity.didWebDomain,
    prover: new DomainProver({
      policy: deps.policy,
      dnsServers: settings.dnsServers,
      allowHttp: settings.allowHttp,
    }),
    limit: { limiter, perAgent: config.identity.keyChangeRateLimit },
    allowPort: settings.allowHttp,
    recheckMs: settings.recheckMs,
  });
  return {
    domains,
    startJobs: () => {
      deps.lifecycle.add(
        'domain re-check',
        every(
          Math.min(RECHECK_SWEEP_MS, settings.recheckMs),
          () => domains.recheckDue(),
          (error) =>
            deps.log.error({ err: error, job: 'domain-recheck' }, 're-checking domain claims failed'),
        ),
        (jobs) => jobs.stop(),
      );
    },
  };
}
