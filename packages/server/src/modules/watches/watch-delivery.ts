import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../kernel/clock.js';
import type { Db } from '../../db/connect.js';
import { claimDueDeliveries, finishDelivery, retryDeliveryAt, type DeliveryRow } from './watches-store.js';
import { deleteWatch } from './watches-store.js';

/**
 * Sends one signed event message: the tasks module's webhook deliverer (same signer, network policy,
 * lanes and response bound as invocations). Declared here, wired by the composition root.
 */
export type EventSender = (
  message: { lane: string; url: string; secret: string; id: string; body: string },
  signal: AbortSignal,
) => Promise<{ ok: true } | { ok: false; status?: number; reason: string }>;

export interface WatchDeliveryOptions {
  /** Attempts of one delivery before it is dropped. */
  maxAttempts: number;
  /** Wait before the first retry; each later one waits 4 times longer, with jitter, up to a day. */
  retryBaseMs: number;
  /** Deliveries one node takes per tick. */
  maxPerTick: number;
  /** An attempt unanswered this long has failed. */
  timeoutMs: number;
}

export interface WatchDeliveryDeps {
  db: Db;
  clock: Clock;
  send: EventSender;
  log: FastifyBaseLogger;
  options: WatchDeliveryOptions;
}

const MAX_RETRY_DELAY_MS = 24 * 60 * 60 * 1000;

/**
 * The watches' outbox: due deliveries are taken under a lease (so a node that dies mid-send leaves
 * them to another after the lease), sent, and deleted once answered 2xx; a failure is retried with
 * exponential backoff and jitter (Standard Webhooks, "Retry schedule"), up to maxAttempts. A 410 Gone
 * ends the watch: the receiver says it wants no more.
 */
export class WatchDeliverer {
  constructor(private readonly deps: WatchDeliveryDeps) {}

  /** One round: takes what is due and sends it; resolves once every attempt has ended. */
  async tick(signal?: AbortSignal): Promise<number> {
    const { db, clock, options } = this.deps;
    const now = clock.now();
    const due = await claimDueDeliveries(db, now, now + options.timeoutMs * 2, options.maxPerTick);
    await Promise.all(due.map((delivery) => this.attempt(delivery, signal)));
    return due.length;
  }

  private async attempt(delivery: DeliveryRow, stop?: AbortSignal): Promise<void> {
    const { db, clock, options, log } = this.deps;
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = stop === undefined ? timeout : AbortSignal.any([timeout, stop]);
    const outcome = await this.deps.send(
      {
        lane: `watch:${delivery.owner_did}`,
        url: delivery.url,
        secret: delivery.secret,
        id: delivery.id,
        body: delivery.body,
      },
      signal,
    );
    if (outcome.ok) {
      await finishDelivery(db, delivery.id);
      return;
    }
    if (outcome.status === 410) {
      log.info({ watch: delivery.watch_id }, 'watch ended: its webhook answered 410 Gone');
      await db
        .transaction()
        .execute((trx) => deleteWatch(trx, delivery.owner_did, delivery.watch_id, clock.now()));
      return;
    }
    if (delivery.attempts >= options.maxAttempts) {
      log.warn(
        { watch: delivery.watch_id, delivery: delivery.id, reason: outcome.reason },
        `watch delivery dropped after ${delivery.attempts} attempts`,
      );
      await finishDelivery(db, delivery.id);
      return;
    }
    const delay = Math.min(MAX_RETRY_DELAY_MS, options.retryBaseMs * 4 ** (delivery.attempts - 1));
    const jitter = Math.floor(Math.random() * delay * 0.2);
    await retryDeliveryAt(db, delivery.id, clock.now() + delay + jitter);
  }
}
