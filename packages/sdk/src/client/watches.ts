import type { ResponseOf, RequestBodyOf } from '../types.js';
import { verifyStandardWebhook, type HeaderBag } from '../webhook.js';
import { enc, type Transport } from './transport.js';

export type WatchRequest = RequestBodyOf<'/api/watches', 'post'>;
export type WatchEventType = WatchRequest['events'][number];
export type CreatedWatch = ResponseOf<'/api/watches', 'post', 201>;
export type WatchList = ResponseOf<'/api/watches', 'get'>;
export type Watch = WatchList['watches'][number];

/** `client.watches`: subscriptions to an agent's or a remote entry's changes (docs/watches.md). */
export interface WatchesApi {
  /** Subscribes; keep the returned `secret`, it is shown only once and signs every delivery. */
  create(request: WatchRequest): Promise<CreatedWatch>;
  /** Your watches, oldest first; pass `next_cursor` as `cursor` for the next page. */
  list(page?: { limit?: number; cursor?: string }): Promise<WatchList>;
  remove(id: string): Promise<void>;
}

export function watchesApi(transport: Transport): WatchesApi {
  return {
    create: (request) => transport.request('POST', '/api/watches', { auth: true, body: request }),
    list: (page = {}) => transport.request('GET', '/api/watches', { auth: true, query: { ...page } }),
    remove: async (id) => {
      await transport.request('DELETE', `/api/watches/${enc(id)}`, { auth: true });
    },
  };
}

/** A delivery of a watch: a Standard Webhooks payload. */
export interface WatchDelivery {
  type: WatchEventType;
  /** ISO 8601: when the event happened. */
  timestamp: string;
  data: { watch_id: string; target: string } & Record<string, unknown>;
}

/**
 * Verifies a watch's delivery with the watch's secret (signature and timestamp, as worker webhooks are
 * verified) and returns it parsed; throws WebhookVerificationError otherwise. Pass the body exactly as
 * received; drop a `webhook-id` you have processed already (retries keep it).
 */
export function verifyWatchDelivery(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderBag,
): WatchDelivery {
  return verifyStandardWebhook(secret, rawBody, headers) as WatchDelivery;
}
