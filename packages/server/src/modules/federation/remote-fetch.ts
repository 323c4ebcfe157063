import type http from 'node:http';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { requestBounded } from '../../kernel/outbound-http.js';

export interface FetchLimits {
  /** The whole answer's deadline: a slow drip of bytes ends here, whatever its pace. */
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface RemoteResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered (after same-policy redirects). */
  url: string;
}

/** Why a fetch was refused or failed, in words an operator can act on (shown on the source status). */
export class RemoteFetchError extends Error {}

const MAX_REDIRECTS = 3;

/**
 * GET through the webhook network policy: connects only to addresses the policy allows (public ones
 * unless the operator allows private networks), checked after DNS resolution; follows at most three
 * redirects, each checked again (a redirect to a private address is refused like a direct request);
 * stops at the size limit and at the deadline.
 */
export async function fetchRemote(
  policy: WebhookNetworkPolicy,
  url: URL,
  headers: Record<string, string>,
  limits: FetchLimits,
  signal?: AbortSignal,
  /** False for a trust root: it is read where it is named, and a redirect is answered as it came. */
  followRedirects = true,
): Promise<RemoteResponse> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const combined = signal === undefined ? deadline : AbortSignal.any([deadline, signal]);
  let current = url;
  for (let hop = 0; ; hop += 1) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw new RemoteFetchError(`${current.href} is not an http(s) URL`);
    try {
      policy.assertDeliverableLiteral(current);
    } catch (error) {
      throw new RemoteFetchError(`refused ${current.href}: ${(error as Error).message}`);
    }
    const target = current;
    const response = await requestBounded(policy, target, {
      method: 'GET',
      headers: { accept: 'application/json', ...headers },
      signal: combined,
      maxResponseBytes: limits.maxResponseBytes,
      tooLarge: () => tooLarge(target, limits.maxResponseBytes),
    }).catch((caught: unknown) => {
      if (caught instanceof RemoteFetchError) throw caught;
      // A connection the policy refused comes wrapped; its own words say why.
      const cause = (caught as { cause?: unknown }).cause;
      const error = cause instanceof Error && cause.name === 'ForbiddenWebhookTargetError' ? cause : caught;
      // The round's or the source's deadline (its reason names which), not the remote side's fault.
      if (signal?.aborted === true && signal.reason instanceof Error)
        throw new RemoteFetchError(`${current.href} was not fetched in full: ${signal.reason.message}`);
      if (deadline.aborted)
        throw new RemoteFetchError(
          `${current.href} did not answer in full within ${limits.timeoutMs} ms (FEDERATION_FETCH_TIMEOUT_SECONDS)`,
        );
      throw new RemoteFetchError(`fetching ${current.href} failed: ${(error as Error).message}`);
    });
    const location = response.headers.location;
    if (
      followRedirects &&
      response.status >= 300 &&
      response.status < 400 &&
      response.status !== 304 &&
      location !== undefined
    ) {
      if (hop >= MAX_REDIRECTS)
        throw new RemoteFetchError(`${url.href} redirected more than ${MAX_REDIRECTS} times`);
      try {
        current = new URL(location, current);
      } catch {
        throw new RemoteFetchError(
          `${current.href} redirected to ${JSON.stringify(location.slice(0, 200))}, which is not a URL`,
        );
      }
      continue;
    }
    return { ...response, url: current.href };
  }
}

const tooLarge = (url: URL, maxBytes: number): RemoteFetchError =>
  new RemoteFetchError(
    `${url.href} answered more than ${Math.round(maxBytes / 1024)} KB (FEDERATION_MAX_RESPONSE_KB)`,
  );

/**
 * Seconds of a Cache-Control max-age, if the answer gives one (no-store and no-cache give 0), at most
 * `capSeconds`: however many digits the header has, the answer is a finite number within the cap.
 */
export function maxAgeSeconds(headers: http.IncomingHttpHeaders, capSeconds: number): number | undefined {
  const value = headers['cache-control'];
  if (value === undefined) return undefined;
  if (/\bno-(store|cache)\b/i.test(value)) return 0;
  const match = /\bmax-age=(\d+)/i.exec(value);
  if (match === null) return undefined;
  const seconds = Number(match[1]);
  return Number.isFinite(seconds) ? Math.min(seconds, capSeconds) : capSeconds;
}
