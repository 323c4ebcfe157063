import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import { every } from '../../kernel/periodic.js';
import type { Db } from '../../db/connect.js';
import type { TransactionRunner } from '../../db/group-commit.js';
import { RegistrationLimiter } from '../agents/registration-limits.js';
import type { TokenService } from '../identity/tokens.js';
import { KeyRecoveryService } from './key-recovery.js';
import { KeyRotationService } from './key-rotation.js';

export interface KeyRotationModuleDeps {
  db: Db;
  /** The agents module's writer (group commit on SQLite): a key change is a write of the agent. */
  writes: TransactionRunner;
  clock: Clock;
  log: Logger;
  config: Config;
  lifecycle: Lifecycle;
  tokens: TokenService;
}

export interface KeyRotationModule {
  keyRotation: KeyRotationService;
  keyRecovery: KeyRecoveryService;
  /** The sweep that finishes due recoveries; stopped by the lifecycle. */
  startJobs(): void;
}

/** How often due recoveries are looked for: a timelock is hours, so a minute late is nothing. */
const RECOVERY_SWEEP_MS = 60_000;

export function createKeyRotationModule(deps: KeyRotationModuleDeps): KeyRotationModule {
  const { db, writes, clock, config, tokens } = deps;
  const { didWebDomain, publicUrl } = config.identity;
  const registration = config.registration;
  // Counted apart from registrations, under the same per-address and per-network limits and window.
  const limiter = new RegistrationLimiter(
    {
      perAddress: registration.rateLimit,
      perPrefix: registration.prefixRateLimit,
      perIpv6Site: registration.ipv6SiteRateLimit,
      windowMs: registration.rateWindowSeconds * 1000,
    },
    { code: 'KEY_CHANGE_RATE_LIMITED', noun: 'key changes', keyPrefix: 'key:' },
  );
  const limit = { limiter, perAgent: config.identity.keyChangeRateLimit };
  const proof = { db, didWebDomain, audience: publicUrl };
  const keyRecovery = new KeyRecoveryService({
    ...proof,
    writes,
    clock,
    limit,
    timelockMs: config.identity.keyRecoveryMs,
  });
  return {
    keyRotation: new KeyRotationService({ ...proof, writes, clock, tokens, limit }),
    keyRecovery,
    startJobs: () => {
      deps.lifecycle.add(
        'key recovery sweep',
        every(
          RECOVERY_SWEEP_MS,
          () => keyRecovery.finishDue(),
          (error) =>
            deps.log.error({ err: error, job: 'key-recovery' }, 'finishing due key recoveries failed'),
        ),
        (jobs) => jobs.stop(),
      );
    },
  };
}
