import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { ProbeConfig } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import type { Db } from '../../db/connect.js';
import type { RegistryMetrics } from '../../telemetry/prometheus.js';
import { AvailabilityService } from './availability.js';
import { webhookOnlineWindow } from './availability-model.js';
import { WebhookProber, type WebhookProberDeps } from './webhook-probes.js';

export interface AvailabilityModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: RegistryMetrics;
  lifecycle: Lifecycle;
  probes: ProbeConfig;
  /** How a probe reaches a webhook (the tasks module's deliverer, which exists once tasks are built). */
  ping: WebhookProberDeps['ping'];
  /** No background probe rounds: tests run them with probes.tick(). */
  manualProbes: boolean;
}

export interface AvailabilityModule {
  availability: AvailabilityService;
  probes: WebhookProber;
  /** Presence writes in batches and probe rounds; stopped by the lifecycle. */
  startJobs(): void;
}

export function createAvailabilityModule(deps: AvailabilityModuleDeps): AvailabilityModule {
  const { db, clock, log, metrics, lifecycle } = deps;
  const availability = new AvailabilityService({
    db,
    clock,
    onError: (error) => log.error({ err: error, job: 'availability' }, 'recording presence failed'),
    webhookWindowMs: webhookOnlineWindow(deps.probes.intervalMs),
  });
  const probes = new WebhookProber({
    db,
    clock,
    settings: deps.probes,
    ping: deps.ping,
    onError: (error) => log.error({ err: error, job: 'probes' }, 'webhook probes failed'),
    onProbe: (ok) => metrics.probed(ok),
  });
  metrics.watchAvailability(() => availability.counts());
  return {
    availability,
    probes,
    startJobs: () => {
      // Presence noted by polls is written in batches; stop() writes the last batch.
      lifecycle.add('presence writes', availability.start(), (jobs) => jobs.stop());
      lifecycle.add('webhook probes', deps.manualProbes ? probes.stopper() : probes.start(), (jobs) =>
        jobs.stop(),
      );
    },
  };
}
