import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../kernel/config.js';
import type { Lifecycle } from '../../kernel/lifecycle.js';
import { TASK_LIMITS } from './task-limits.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { DatabaseHandle } from '../../db/connect.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { CapabilitySchemas } from '../capabilities/capability-schemas.js';
import type { RemoteReferrals } from '../agents/agents.js';
import { AgentTaskService, type WorkerPresence } from './agent-tasks.js';
import { QueueDeliverer, WebhookDeliverer, type WebhookOutcomes } from './deliverers.js';
import { InProcessTaskEvents, type TaskEvents } from './events.js';
import { InvocationService, type TargetPresence } from './invocation.js';
import { NOTIFY_CHANNEL, PostgresTaskEvents } from './pg-events.js';
import { startTaskMaintenance } from './task-maintenance.js';
import { TaskStateMachine } from './task-state.js';

export interface TasksModuleDeps {
  database: DatabaseHandle;
  clock: Clock;
  log: Logger;
  telemetry: Telemetry;
  config: Config;
  lifecycle: Lifecycle;
  schemas: CapabilitySchemas;
  webhookPolicy: WebhookNetworkPolicy;
  presence: TargetPresence & WorkerPresence;
  /** Where webhook deliveries' outcomes go (availability's probes). */
  outcomes: WebhookOutcomes;
  /** Agents of other registries, invoked there (federation). */
  remote: RemoteReferrals;
  /** Runs in the transaction of every task's terminal move (the service record). */
  onFinished: (trx: DatabaseHandle['db'], taskId: string) => Promise<void>;
}

export interface TasksModule {
  events: TaskEvents;
  invocation: InvocationService;
  agentTasks: AgentTaskService;
  /** Reaches a webhook agent outside a task: availability's probes. */
  webhookDeliverer: WebhookDeliverer;
  /** Ends blocked invocations and long polls, so shutdown does not wait minutes for them. */
  stopWaiters(): Promise<void>;
  /** Timing out expired tasks and forgetting expired keys, on every node; stopped by the lifecycle. */
  startJobs(): void;
}

export async function createTasksModule(deps: TasksModuleDeps): Promise<TasksModule> {
  const { database, clock, log, telemetry, config, lifecycle, presence } = deps;
  const { db } = database;
  const events: TaskEvents = lifecycle.add(
    'task events',
    database.postgresUrl === undefined
      ? new InProcessTaskEvents()
      : await PostgresTaskEvents.start(
          database.postgresUrl,
          async (payload, within) => {
            await sql`select pg_notify(${NOTIFY_CHANNEL}, ${payload})`.execute(within ?? db);
          },
          log,
        ),
    (taskEvents) => taskEvents.close(),
  );
  const states = new TaskStateMachine(db, clock, events, deps.onFinished);
  const webhookDeliverer = new WebhookDeliverer({
    clock,
    telemetry,
    states,
    policy: deps.webhookPolicy,
    maxResponseBytes: TASK_LIMITS.invocationBodyLimitBytes,
    maxConcurrentPerAgent: config.tasks.webhookMaxConcurrencyPerAgent,
    log,
    outcomes: deps.outcomes,
  });
  const invocation = new InvocationService({
    db,
    remote: deps.remote,
    telemetry,
    clock,
    events,
    states,
    schemas: deps.schemas,
    didWebDomain: config.identity.didWebDomain,
    bounds: config.tasks,
    presence,
    deliverers: { queue: new QueueDeliverer(events), webhook: webhookDeliverer },
  });
  const agentTasks = new AgentTaskService({
    presence,
    db,
    telemetry,
    clock,
    events,
    states,
    maxPollsPerAgent: config.tasks.maxPollsPerAgent,
  });
  const stopWaiters = async (): Promise<void> => {
    agentTasks.shutdown();
    await invocation.shutdown();
  };
  lifecycle.add('invocations and polls in progress', stopWaiters, (stop) => stop());
  return {
    events,
    invocation,
    agentTasks,
    webhookDeliverer,
    stopWaiters,
    startJobs: () => {
      // Expired open tasks to `timeout` and expired idempotency keys out, on every node (idempotent).
      lifecycle.add(
        'task maintenance',
        startTaskMaintenance({
          db,
          clock,
          states,
          bounds: config.tasks,
          intervalMs: config.tasks.sweepSeconds * 1000,
          onError: (job, error) => log.error({ err: error, job }, 'background job failed'),
        }),
        (jobs) => jobs.stop(),
      );
    },
  };
}
