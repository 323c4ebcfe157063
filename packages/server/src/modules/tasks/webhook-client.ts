import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { LaneAgents } from './webhook-lanes.js';

export interface WebhookHttpResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

export class WebhookResponseTooLargeError extends Error {}

/**
 * POSTs one JSON body: never follows redirects, stops at `maxResponseBytes`, gives up when `signal`
 * aborts (the invocation deadline), and connects only where `lookup` allows.
 */
export function postJson(
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: { signal: AbortSignal; maxResponseBytes: number; lookup: LookupFunction; agents: LaneAgents },
): Promise<WebhookHttpResponse> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(
      url,
      {
        method: 'POST',
        agent: options.agents[url.protocol as 'http:' | 'https:'],
        lookup: options.lookup,
        signal: options.signal,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxResponseBytes) {
            response.destroy(
              new WebhookResponseTooLargeError(`the response exceeded ${options.maxResponseBytes} bytes`),
            );
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
