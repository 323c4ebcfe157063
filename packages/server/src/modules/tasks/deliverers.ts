import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../kernel/clock.js';
import type { AgentRow } from '../agents/agents-store.js';
import type { TaskRow } from './tasks-store.js';
import type { TaskEvents } from './events.js';
import { ForbiddenWebhookTargetError, type WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { TaskStateMachine } from './task-state.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { requestBounded } from '../../kernel/outbound-http.js';
import { WebhookLanes, type LaneAgents } from './webhook-lanes.js';

/** Hands a new task to its agent. Chosen once per invocation from the agent's delivery mode. */
export interface Deliverer {
  dispatch(task: TaskRow, target: AgentRow): Promise<void>;
  close(): Promise<void>;
}

/** Queue mode: the task row is the delivery; wake the agent's long-polling workers on any node. */
export class QueueDeliverer implements Deliverer {
  constructor(private readonly events: TaskEvents) {}

  dispatch(task: TaskRow): Promise<void> {
    return this.events.workAvailable(task.target_did);
  }

  async close(): Promise<void> {}
}

/** What the agent's webhook receives, signed per Standard Webhooks. */
export interface WebhookPayload {
  task_id: string;
  capability: string;
  input: unknown;
  caller_did: string;
  target_did: string;
  created_at: number;
  deadline_at: number;
}

/**
 * A `whsec_<base64>` secret is a Standard Webhooks secret (its base64 body is the HMAC key); any other
 * secret is used as raw key bytes, which receivers verify with `new Webhook(secret, { format: "raw" })`.
 */
export function webhookSigner(secret: string): Webhook {
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
}

/**
 * The Standard Webhooks headers of one message: its id, the attempt's time in seconds and the
 * signature over `id.timestamp.body`. Every delivery the registry sends (tasks, probes, watches) is
 * signed here.
 */
export function standardWebhookHeaders(
  id: string,
  now: number,
  body: string,
  secret: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature' | 'user-agent', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now / 1000)),
    'webhook-signature': webhookSigner(secret).sign(id, new Date(now), body),
    'user-agent': 'agent-registry-webhook/1',
  };
}

/** A signed event message for a subscriber's webhook (watches), sent in the subscriber's own lane. */
export interface EventMessage {
  /** The lane it waits in: one subscriber's slow host never holds another's deliveries. */
  lane: string;
  url: string;
  secret: string;
  /** The message id (`webhook-id`): the same on every retry of one event. */
  id: string;
  body: string;
}

/** How an event message went: delivered (2xx), or why not and with what status. */
export type EventOutcome = { ok: true } | { ok: false; status?: number; reason: string };

/** The event type of an availability probe (docs/availability.md, "The probe request"). */
export const PING_EVENT_TYPE = 'registry.ping';

/** Most bytes of a probe's answer read: an answer is only its status. */
const PING_MAX_RESPONSE_BYTES = 64 * 1024;

/** A webhook to probe. */
export interface PingTarget {
  did: string;
  webhook_url: string;
  webhook_secret: string;
}

/** Where deliveries' outcomes go for availability: declared here, implemented by the prober. */
export interface WebhookOutcomes {
  deliverySucceeded(did: string): void;
  deliveryFailed(did: string): void;
}

export interface WebhookDelivererDeps {
  clock: Clock;
  telemetry: Telemetry;
  states: TaskStateMachine;
  policy: WebhookNetworkPolicy;
  maxResponseBytes: number;
  /** Deliveries in flight per target agent (WEBHOOK_MAX_CONCURRENCY_PER_AGENT); more wait their turn. */
  maxConcurrentPerAgent: number;
  log: FastifyBaseLogger;
  /** Told of each delivery's outcome (availability); none: nobody listens. */
  outcomes?: WebhookOutcomes;
}

/**
 * Webhook mode: POST the task; a 2xx `{output}` completes it, 202 means the agent reports later
 * through result/fail, anything else (status, timeout, refused connection, SSRF refusal) fails it.
 */
export class WebhookDeliverer implements Deliverer {
  private readonly inFlight = new Set<AbortController>();
  /** Per target agent pools and limits: one agent's slow host never holds another agent's sockets. */
  readonly lanes: WebhookLanes;
  /**
   * Probes' own connections, outside the lanes: a probe waiting behind an agent's slow calls would time
   * out and read a healthy agent offline, and anyone may fill a lane. No keep-alive: the next probe of
   * an agent is minutes away. How many run at once is the prober's bound (PROBE_MAX_CONCURRENT).
   */
  private readonly probeAgents: LaneAgents = {
    'http:': new http.Agent({ keepAlive: false }),
    'https:': new https.Agent({ keepAlive: false }),
  };

  constructor(private readonly deps: WebhookDelivererDeps) {
    this.lanes = new WebhookLanes({ maxConcurrentPerAgent: deps.maxConcurrentPerAgent });
  }

  async dispatch(task: TaskRow, target: AgentRow): Promise<void> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    void this.deliver(task, target, controller)
      .catch((error: unknown) =>
        this.deps.log.error({ err: error, taskId: task.id }, 'webhook delivery crashed'),
      )
      .finally(() => this.inFlight.delete(controller));
  }

  async close(): Promise<void> {
    for (const controller of this.inFlight) controller.abort(new Error('registry shutting down'));
    this.lanes.close();
    this.probeAgents['http:'].destroy();
    this.probeAgents['https:'].destroy();
  }

  private async deliver(task: TaskRow, target: AgentRow, controller: AbortController): Promise<void> {
    const { states, telemetry } = this.deps;
    const startedAt = performance.now();
    const result = await this.post(task, target, controller);
    const durationMs = performance.now() - startedAt;
    if (result === 'completed' || result === 'accepted') {
      telemetry.webhookDelivered({ taskId: task.id, outcome: result, durationMs });
      this.deps.outcomes?.deliverySucceeded(target.did);
      return;
    }
    if (!controller.signal.aborted) this.deps.outcomes?.deliveryFailed(target.did);
    // No answer by the deadline is a timeout (504), like an agent that never reports; a webhook
    // that answered badly or could not be reached is a webhook failure (502).
    if (result.failure === DEADLINE_PASSED) {
      telemetry.webhookDelivered({ taskId: task.id, outcome: 'timeout', durationMs });
      await states.timeOut(task.id);
      return;
    }
    telemetry.webhookDelivered({ taskId: task.id, outcome: 'failed', durationMs });
    await states.fail(task.id, result.failure, 'WEBHOOK_FAILED');
  }

  /**
   * Sends one availability probe: a Standard Webhooks delivery of event type `registry.ping`, signed as
   * tasks are, through the same network policy, on a connection of its own (never waiting for a slot in
   * the agent's lane, so its timeout measures the agent's answer). Any 2xx is an answer.
   */
  async ping(target: PingTarget, signal: AbortSignal): Promise<{ ok: true } | { ok: false; reason: string }> {
    const now = this.deps.clock.now();
    const id = `ping_${randomUUID()}`;
    const body = JSON.stringify({
      type: PING_EVENT_TYPE,
      timestamp: new Date(now).toISOString(),
      data: { target_did: target.did },
    });
    const headers = {
      ...standardWebhookHeaders(id, now, body, target.webhook_secret),
      // The next probe is minutes away: keeping the socket open would hold one per agent for nothing.
      connection: 'close',
    };
    try {
      const url = new URL(target.webhook_url);
      this.deps.policy.assertDeliverableLiteral(url);
      const response = await postJson(this.deps.policy, url, body, headers, {
        signal,
        maxResponseBytes: PING_MAX_RESPONSE_BYTES,
        agents: this.probeAgents,
      });
      if (response.status >= 200 && response.status < 300) return { ok: true };
      return { ok: false, reason: `the webhook answered HTTP ${response.status}` };
    } catch (error) {
      const failure = describeFailure(error, false);
      return { ok: false, reason: failure === DEADLINE_PASSED ? 'no answer in time' : failure };
    }
  }

  /**
   * Sends one event message (a watch's delivery) through the same network policy, lanes and response
   * bound as tasks, signed as they are; `signal` bounds the wait for a lane slot and the request.
   */
  async sendEvent(message: EventMessage, signal: AbortSignal): Promise<EventOutcome> {
    const headers = standardWebhookHeaders(message.id, this.deps.clock.now(), message.body, message.secret);
    try {
      const url = new URL(message.url);
      this.deps.policy.assertDeliverableLiteral(url);
      const response = await this.lanes.run(message.lane, signal, (agents) =>
        postJson(this.deps.policy, url, message.body, headers, {
          signal,
          maxResponseBytes: this.deps.maxResponseBytes,
          agents,
        }),
      );
      if (response.status >= 200 && response.status < 300) return { ok: true };
      return { ok: false, status: response.status, reason: `the webhook answered HTTP ${response.status}` };
    } catch (error) {
      const failure = describeFailure(error, false);
      return { ok: false, reason: failure === DEADLINE_PASSED ? 'no answer in time' : failure };
    }
  }

  /** Whether the webhook completed the task or took it for later (202), or why delivery failed. */
  private async post(
    task: TaskRow,
    target: AgentRow,
    controller: AbortController,
  ): Promise<'completed' | 'accepted' | { failure: string | typeof DEADLINE_PASSED }> {
    if (target.webhook_url === null || target.webhook_secret === null)
      return { failure: 'the agent has no webhook configured' };
    const payload: WebhookPayload = {
      task_id: task.id,
      capability: task.capability,
      input: JSON.parse(task.input) as unknown,
      caller_did: task.caller_did,
      target_did: task.target_did,
      created_at: Number(task.created_at),
      deadline_at: Number(task.deadline_at),
    };
    const body = JSON.stringify(payload);
    const now = this.deps.clock.now();
    const headers = standardWebhookHeaders(task.id, now, body, target.webhook_secret);
    // The request stops at the deadline or at shutdown. A timer cleared as soon as the webhook answers,
    // not AbortSignal.timeout + AbortSignal.any, whose timer and signals outlive a finished delivery
    // until its deadline.
    const request = new AbortController();
    const onShutdown = () => request.abort();
    controller.signal.addEventListener('abort', onShutdown, { once: true });
    const deadline = setTimeout(onShutdown, Math.max(1, Number(task.deadline_at) - now));
    let response;
    try {
      const url = new URL(target.webhook_url);
      this.deps.policy.assertDeliverableLiteral(url);
      // Waiting for a slot counts against this task's own deadline only (its signal), never another's.
      response = await this.lanes.run(target.did, request.signal, (agents) =>
        postJson(this.deps.policy, url, body, headers, {
          signal: request.signal,
          maxResponseBytes: this.deps.maxResponseBytes,
          agents,
        }),
      );
    } catch (error) {
      return { failure: describeFailure(error, controller.signal.aborted) };
    } finally {
      clearTimeout(deadline);
      controller.signal.removeEventListener('abort', onShutdown);
    }
    if (response.status === 202) {
      await this.deps.states.markDelivered(task.id);
      return 'accepted';
    }
    if (response.status < 200 || response.status >= 300) {
      const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
      return { failure: `the webhook answered HTTP ${response.status}${redirect}` };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString('utf8'));
    } catch {
      return { failure: `the webhook answered HTTP ${response.status} without a JSON body` };
    }
    const output = (parsed as { output?: unknown } | null)?.output;
    if (typeof output !== 'object' || output === null || Array.isArray(output)) {
      return {
        failure: `the webhook answered HTTP ${response.status} without an {"output": {...}} object (answer 202 to report later)`,
      };
    }
    await this.deps.states.complete(task.id, output);
    return 'completed';
  }
}

class WebhookResponseTooLargeError extends Error {}

/** POSTs one JSON body through the network policy on the lane's keep-alive pool; redirects are not followed. */
function postJson(
  policy: WebhookNetworkPolicy,
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: { signal: AbortSignal; maxResponseBytes: number; agents: LaneAgents },
) {
  return requestBounded(policy, url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    body,
    signal: options.signal,
    agent: options.agents[url.protocol as 'http:' | 'https:'],
    maxResponseBytes: options.maxResponseBytes,
    tooLarge: () =>
      new WebhookResponseTooLargeError(`the response exceeded ${options.maxResponseBytes} bytes`),
  });
}

const DEADLINE_PASSED = Symbol('deadline passed');

function describeFailure(error: unknown, shuttingDown: boolean): string | typeof DEADLINE_PASSED {
  if (shuttingDown) return 'the registry shut down during delivery';
  if (error instanceof ForbiddenWebhookTargetError) return `webhook refused: ${error.message}`;
  if (error instanceof WebhookResponseTooLargeError)
    return `the webhook response was too large: ${error.message}`;
  const name = error instanceof Error ? error.name : '';
  const code = (error as { code?: string } | null)?.code;
  if (name === 'AbortError' || name === 'TimeoutError' || code === 'ABORT_ERR') return DEADLINE_PASSED;
  if (code === 'ECONNREFUSED') return 'the webhook refused the connection';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the webhook host does not resolve';
  return `the webhook could not be reached${code ? ` (${code})` : ''}`;
}
