import { randomUUID } from 'node:crypto';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { ProbeFinding } from './entry-probe-store.js';
import type { ProbeLimits } from './mcp-probe.js';
import { ProbeNetworkError, probeFetch } from './probe-fetch.js';

/** A2A's TaskNotFoundError in the JSON-RPC binding (A2A specification, "Error Code Mappings"). */
const TASK_NOT_FOUND = -32001;
/** VersionNotSupportedError: an A2A server that speaks another version of the protocol. */
const VERSION_NOT_SUPPORTED = -32009;
const METHOD_NOT_FOUND = -32601;

/**
 * Probes an A2A card's service endpoint with the call every conforming server answers the same way:
 * `GetTask` (JSON-RPC binding, A2A-Version 1.0) for a task id nobody has, which must end in
 * TaskNotFoundError (-32001). A server that does not know the method is asked once more with the 0.3
 * name, `tasks/get`, so servers of the earlier version are recognised too.
 */
export async function probeA2a(
  policy: WebhookNetworkPolicy,
  url: string,
  limits: ProbeLimits,
  signal: AbortSignal,
): Promise<ProbeFinding> {
  const fetch = probeFetch(policy, limits.budgetBytes, signal);
  try {
    const first = await getTask(fetch, url, 'GetTask', { 'a2a-version': '1.0' });
    if (first.kind !== 'rpc-error' || first.code !== METHOD_NOT_FOUND) return finding(first);
    return finding(await getTask(fetch, url, 'tasks/get', {}));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (signal.aborted || error instanceof ProbeNetworkError) return { status: 'unreachable', reason };
    return { status: 'not_a2a', reason };
  }
}

type Answer = { kind: 'rpc-error'; code: number } | { kind: 'http'; status: number; why: string };

async function getTask(
  fetch: ReturnType<typeof probeFetch>,
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id: randomUUID() } }),
  });
  const text = await response.text();
  if (response.status === 401 || response.status === 403)
    return { kind: 'http', status: response.status, why: 'authentication required' };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'http', status: response.status, why: 'the answer is not JSON' };
  }
  const error = (body as { jsonrpc?: unknown; error?: { code?: unknown } } | null) ?? {};
  if (error.jsonrpc === '2.0' && typeof error.error?.code === 'number')
    return { kind: 'rpc-error', code: error.error.code };
  return { kind: 'http', status: response.status, why: 'the answer is not a JSON-RPC error' };
}

function finding(answer: Answer): ProbeFinding {
  if (answer.kind === 'rpc-error') {
    if (answer.code === TASK_NOT_FOUND || answer.code === VERSION_NOT_SUPPORTED) return { status: 'answers' };
    return {
      status: 'not_a2a',
      reason: `GetTask for an unknown task answered JSON-RPC error ${answer.code}`,
    };
  }
  if (answer.status === 401 || answer.status === 403)
    return { status: 'needs_auth', reason: `HTTP ${answer.status}` };
  if (answer.status >= 500) return { status: 'unreachable', reason: `HTTP ${answer.status}` };
  return { status: 'not_a2a', reason: `HTTP ${answer.status}: ${answer.why}` };
}
