import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import { requestBounded } from '../../kernel/outbound-http.js';

/** The probe got no HTTP answer: refused by the network policy, no connection, or no answer in time. */
export class ProbeNetworkError extends Error {}

/** The probe's answers went over its byte budget. */
export class ProbeTooLargeError extends Error {}

/**
 * A fetch for one probe over the registry's one outbound client: every request through the webhook
 * network policy (checked after DNS resolution), never following a redirect itself, all the probe's
 * answers together within `budgetBytes`. Only POST goes out: a GET (the MCP client's optional stream of
 * server messages) is answered 405 here, as a server without that stream answers, so a probe never
 * holds a connection open; nothing else is sent.
 */
export function probeFetch(
  policy: WebhookNetworkPolicy,
  budgetBytes: number,
  signal: AbortSignal,
): FetchLike {
  let spent = 0;
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    if ((init?.method ?? 'GET').toUpperCase() !== 'POST') return new Response(null, { status: 405 });
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ProbeNetworkError(`${url.protocol} is not http(s)`);
    try {
      policy.assertDeliverableLiteral(url);
    } catch (error) {
      throw new ProbeNetworkError((error as Error).message);
    }
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const remaining = Math.max(0, budgetBytes - spent);
    const signals = init?.signal == null ? [signal] : [signal, init.signal];
    const response = await requestBounded(policy, url, {
      method: 'POST',
      headers,
      body: typeof init?.body === 'string' ? init.body : undefined,
      signal: AbortSignal.any(signals),
      maxResponseBytes: remaining,
      tooLarge: () => new ProbeTooLargeError(`the answers exceeded ${budgetBytes} bytes`),
    }).catch((error: unknown) => {
      if (error instanceof ProbeTooLargeError) throw error;
      const cause = (error as { cause?: unknown }).cause;
      const reason = cause instanceof Error ? cause : (error as Error);
      throw new ProbeNetworkError(reason.message);
    });
    spent += response.body.length;
    const answer = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) answer.append(name, one);
    }
    const empty = [101, 204, 205, 304].includes(response.status) || response.status < 200;
    return new Response(empty ? null : new Uint8Array(response.body), {
      status: response.status < 200 ? 502 : response.status,
      headers: answer,
    });
  };
}
