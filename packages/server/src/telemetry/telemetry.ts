import type { DeprecatedAuthForm } from '../kernel/auth-deprecation.js';
import type { TaskDelivery } from '../db/schema/index.js';
import type { KeyType } from '@agent-registry/protocol';

/** How an invocation ended, as its invoker saw it. */
export type InvocationEndStatus = 'completed' | 'failed' | 'webhook_failed' | 'timeout';

/** What became of one webhook POST: answered with output, accepted for later (202), or failed. */
export type WebhookOutcome = 'completed' | 'accepted' | 'failed' | 'timeout';

/**
 * What services report about the registry's work. Services call this and nothing else: the
 * composition root decides where it goes (Prometheus metrics and info log lines), so no service
 * imports prom-client or a logger for it.
 */
export interface Telemetry {
  agentRegistered(event: { did: string; keyType: KeyType }): void;
  agentDeactivated(event: { did: string }): void;
  invocationEnded(event: {
    taskId: string;
    callerDid: string;
    targetDid: string;
    capability: string;
    delivery: TaskDelivery;
    outcome: InvocationEndStatus;
    durationMs: number;
  }): void;
  webhookDelivered(event: { taskId: string; outcome: WebhookOutcome; durationMs: number }): void;
  reviewSubmitted(event: {
    reviewId: string;
    reviewerDid: string;
    targetDid: string;
    verified: boolean;
  }): void;
  /** Invocations blocked in this process waiting for their result (+1 when one starts, -1 when it ends). */
  invocationsWaiting(delta: 1 | -1): void;
  /** Workers long-polling GET /api/agent/tasks in this process. */
  longPollWaiters(delta: 1 | -1): void;
  /** A query failed because of the database itself (unreachable, dropped connection, timeout). */
  databaseError(event: { error: unknown }): void;
  /** A request used an authentication form kept for a deprecation window: accepted, or refused once it closed. */
  deprecatedAuthentication(event: { form: DeprecatedAuthForm; accepted: boolean }): void;
}

/** For code paths and tests that need no telemetry. */
export const silentTelemetry: Telemetry = {
  agentRegistered: () => undefined,
  agentDeactivated: () => undefined,
  invocationEnded: () => undefined,
  webhookDelivered: () => undefined,
  reviewSubmitted: () => undefined,
  invocationsWaiting: () => undefined,
  longPollWaiters: () => undefined,
  databaseError: () => undefined,
  deprecatedAuthentication: () => undefined,
};
