import http from 'node:http';
import https from 'node:https';
import type { WebhookNetworkPolicy } from './network-policy.js';

/** One request to another host: what it sends, and where the answer is cut short. */
export interface OutboundRequest {
  method: 'GET' | 'POST';
  headers: http.OutgoingHttpHeaders;
  body?: string;
  /** Ends the request: the caller's deadline or shutdown. */
  signal: AbortSignal;
  /** A keep-alive pool of the caller's; Node's global agent without one. */
  agent?: http.Agent;
  maxResponseBytes: number;
  /** The error an answer longer than `maxResponseBytes` (declared or counted) ends with. */
  tooLarge: () => Error;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * The one HTTP client for other hosts (webhooks, federation sources): connects only where the network
 * policy's `lookup` allows (checked after DNS resolution), never follows a redirect itself, stops at
 * `maxResponseBytes` and when `signal` aborts. Errors of the request are passed on as they come.
 */
export function requestBounded(
  policy: WebhookNetworkPolicy,
  url: URL,
  request: OutboundRequest,
): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const outgoing = transport.request(
      url,
      {
        method: request.method,
        agent: request.agent,
        lookup: policy.lookup,
        signal: request.signal,
        headers: request.headers,
      },
      (response) => {
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > request.maxResponseBytes) {
          response.destroy();
          reject(request.tooLarge());
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > request.maxResponseBytes) {
            response.destroy();
            reject(request.tooLarge());
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
