import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { every } from '../../kernel/periodic.js';
import type { Db } from '../../db/connect.js';
import { WatchDeliverer, type EventSender } from './watch-delivery.js';
import type { AvailabilityStatuses } from './watch-events.js';
import { checkAvailability, followChanges } from './watch-sources.js';
import { WatchService, type WatchTargets } from './watches.js';
import { purgeDeletedWatches } from './watches-store.js';

export interface WatchesModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Config;
  lifecycle: Lifecycle;
  policy: WebhookNetworkPolicy;
  targets: WatchTargets;
  send: EventSender;
  availability: AvailabilityStatuses;
}

export interface WatchesModule {
  watches: WatchService;
  deliverer: WatchDeliverer;
  /** One round of everything the jobs do (tests run it instead of waiting for the timers). */
  runOnce(): Promise<void>;
  startJobs(): void;
}

export function createWatchesModule(deps: WatchesModuleDeps): WatchesModule {
  const { db, clock, log, config, lifecycle } = deps;
  const settings = config.watches;
  const watches = new WatchService({
    db,
    clock,
    policy: deps.policy,
    allowHttp: config.tasks.webhookAllowPrivateNetworks,
    targets: deps.targets,
    availability: deps.availability,
    limits: {
      maxPerAgent: settings.maxPerAgent,
      maxPerTarget: settings.maxPerTarget,
      rateLimit: settings.rateLimit,
      rateWindowMs: settings.rateWindowMs,
    },
  });
  const deliverer = new WatchDeliverer({
    db,
    clock,
    send: deps.send,
    log,
    options: {
      maxAttempts: settings.deliveryAttempts,
      retryBaseMs: settings.retryBaseMs,
      maxPerTick: settings.maxPerTick,
      timeoutMs: settings.deliveryTimeoutMs,
    },
  });
  const onError = (job: string) => (error: unknown) =>
    log.error({ err: error, job }, 'background job failed');
  const round = async (signal?: AbortSignal) => {
    await followChanges(db, watches);
    await deliverer.tick(signal);
  };
  return {
    watches,
    deliverer,
    runOnce: async () => {
      await checkAvailability(db, clock, deps.availability, watches);
      await round();
    },
    startJobs: () => {
      lifecycle.add('watch deliveries', every(settings.tickMs, round, onError('watch-deliveries')), (job) =>
        job.stop(),
      );
      lifecycle.add(
        'watch availability',
        every(
          settings.availabilityMs,
          async () => {
            await checkAvailability(db, clock, deps.availability, watches);
            await purgeDeletedWatches(db, clock.now() - settings.rateWindowMs);
          },
          onError('watch-availability'),
        ),
        (job) => job.stop(),
      );
    },
  };
}
