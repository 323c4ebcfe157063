import { Webhook } from 'standardwebhooks';
import type { RegistryClient } from './client.js';
import type { JsonObject } from './types.js';
import type { CapabilityHandler } from './worker.js';

/** The body the registry POSTs to a webhook-mode agent (docs/webhooks.md). */
export interface WebhookDelivery {
  task_id: string;
  capability: string;
  input: JsonObject;
  caller_did: string;
  target_did: string;
  created_at: number;
  deadline_at: number;
}

/**
 * An availability probe: the registry POSTs it on a schedule, signed like a delivery (docs/availability.md).
 * webhookHandler answers it with 200 after verifying it, without calling any capability handler.
 */
export interface RegistryPing {
  type: 'registry.ping';
  /** ISO 8601 time the probe was sent. */
  timestamp: string;
  data: { target_did: string };
}

/** Whether a verified body is an availability probe rather than a task. */
export function isRegistryPing(body: unknown): body is RegistryPing {
  return typeof body === 'object' && body !== null && (body as { type?: unknown }).type === 'registry.ping';
}

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

function headerRecord(headers: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, name) => (out[name.toLowerCase()] = value));
    return out;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * Verifies a delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` over
 * the raw body) with the agent's webhook_secret and returns it parsed. Throws WebhookVerificationError
 * when the signature or timestamp (5 minutes) is wrong. Pass the body exactly as received.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderBag,
): WebhookDelivery {
  return verifyStandardWebhook(secret, rawBody, headers) as WebhookDelivery;
}

/**
 * Any Standard Webhooks message from the registry (a task, a probe, a watch's event) checked with its
 * secret: signature over `id.timestamp.body` and timestamp within 5 minutes; returns the parsed body.
 */
export function verifyStandardWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderBag,
): unknown {
  // whsec_ secrets carry the key in base64; any other secret is used as raw bytes (docs/webhooks.md).
  const verifier = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  try {
    return verifier.verify(body, headerRecord(headers));
  } catch (error) {
    throw new WebhookVerificationError(
      `webhook verification failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

export interface WebhookHandlerOptions {
  /** The agent's webhook_secret. */
  secret: string;
  capabilities: Record<string, CapabilityHandler>;
  /** When given, a handler failure is reported with failTask (the caller sees your message) instead of a 500. */
  client?: RegistryClient;
  /**
   * Most delivery ids remembered to refuse replays (default 100000); past it the oldest is forgotten
   * first. An id is kept until its timestamp leaves the tolerance window, after which the signature
   * check refuses the delivery anyway.
   */
  maxRememberedIds?: number;
}

export interface WebhookAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Minimal shapes of node:http (and Express) request/response, so no Node types are needed here. */
export interface NodeRequestLike {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}
export interface NodeResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}
/** Minimal shapes of Fastify's request/reply. */
export interface FastifyRequestLike {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  rawBody?: string | Uint8Array;
}
export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  send(body: unknown): unknown;
}

export interface WebhookHandler {
  /** Framework-free: verify, run, and say what to answer. */
  handle(rawBody: string | Uint8Array, headers: HeaderBag): Promise<WebhookAnswer>;
  /** node:http `(req, res)`, also Express (mount it before any JSON body parser, or use express.raw()). */
  node(req: NodeRequestLike, res: NodeResponseLike): Promise<void>;
  /** Fastify route handler; register a string parser for application/json so the raw body survives. */
  fastify(request: FastifyRequestLike, reply: FastifyReplyLike): Promise<unknown>;
}

function readBody(req: NodeRequestLike): Promise<string | Uint8Array> {
  if (typeof req.body === 'string' || req.body instanceof Uint8Array) return Promise.resolve(req.body);
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    const encoder = new TextEncoder();
    req.on('data', (chunk) => chunks.push(typeof chunk === 'string' ? encoder.encode(chunk) : chunk));
    req.on('end', () => {
      const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      const body = new Uint8Array(total);
      let offset = 0;
      for (const chunk of chunks) {
        body.set(chunk, offset);
        offset += chunk.length;
      }
      resolve(body);
    });
    req.on('error', reject);
  });
}

/** How far a webhook-timestamp may be from now: the tolerance of the standardwebhooks library. */
const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;

/**
 * Delivery ids seen within the timestamp tolerance, each until it can no longer verify; bounded by
 * count (the oldest first out). Insertion order is close to expiry order, so pruning stops early.
 */
class SeenIds {
  private readonly expiries = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** False when the id was seen and has not expired; otherwise remembers it and returns true. */
  add(id: string, expiresAt: number, now: number): boolean {
    for (const [seen, expiry] of this.expiries) {
      if (expiry > now) break;
      this.expiries.delete(seen);
    }
    const known = this.expiries.get(id);
    if (known !== undefined && known > now) return false;
    while (this.expiries.size >= this.max) {
      const oldest = this.expiries.keys().next();
      if (oldest.done === true) break;
      this.expiries.delete(oldest.value);
    }
    this.expiries.set(id, expiresAt);
    return true;
  }
}

/**
 * Verifies each delivery, runs the capability's handler and answers with its output. A delivery whose
 * webhook-id this handler has already accepted (a replay within the timestamp tolerance) is answered
 * 409 without running anything: the registry sends each task once.
 */
export function webhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  const seen = new SeenIds(Math.max(1, Math.floor(options.maxRememberedIds ?? 100_000)));

  async function handle(rawBody: string | Uint8Array, headers: HeaderBag): Promise<WebhookAnswer> {
    let delivery: WebhookDelivery;
    try {
      delivery = verifyWebhook(options.secret, rawBody, headers);
    } catch (error) {
      return { status: 401, body: { error: (error as Error).message } };
    }
    // A verified probe is answered here: no handler runs, no delivery id is remembered.
    if (isRegistryPing(delivery)) return { status: 200, body: { ok: true } };
    const record = headerRecord(headers);
    const id = record['webhook-id'] ?? '';
    const now = Date.now();
    const sentAt = Number(record['webhook-timestamp']) * 1000;
    if (!seen.add(id, sentAt + TIMESTAMP_TOLERANCE_MS, now)) {
      return {
        status: 409,
        body: { error: `delivery ${id} was already received; a replayed delivery is not run again` },
      };
    }
    const handler = options.capabilities[delivery.capability];
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error('deadline passed')),
      Math.max(0, delivery.deadline_at - Date.now()),
    );
    try {
      if (handler === undefined) throw new Error(`no handler for capability "${delivery.capability}"`);
      const task = {
        task_id: delivery.task_id,
        capability: delivery.capability,
        input: delivery.input,
        caller_did: delivery.caller_did,
        created_at: delivery.created_at,
        deadline_at: delivery.deadline_at,
      };
      const output = await handler(delivery.input, { signal: controller.signal, task });
      return { status: 200, body: { output } };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (options.client === undefined) return { status: 500, body: { error: message } };
      // 202 then fail: the caller gets the agent's own message rather than "webhook failed".
      void options.client.failTask(delivery.task_id, message || 'the handler failed').catch(() => undefined);
      return { status: 202, body: { accepted: true } };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    handle,
    async node(req, res) {
      const answer = await handle(await readBody(req), req.headers);
      res.statusCode = answer.status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer.body));
    },
    async fastify(request, reply) {
      const raw = request.rawBody ?? request.body;
      if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) {
        return reply.code(500).send({
          error:
            'the raw body is needed to verify the signature: parse application/json as a string for this route',
        });
      }
      const answer = await handle(raw, request.headers);
      return reply.code(answer.status).send(answer.body);
    },
  };
}
