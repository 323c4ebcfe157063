import { toolsDigest } from '@agent-registry/protocol';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import type { WebhookNetworkPolicy } from '../../kernel/network-policy.js';
import type { ProbeFinding } from './entry-probe-store.js';
import { ProbeNetworkError, probeFetch } from './probe-fetch.js';

/** Pages of tools/list one probe reads at most: a server paging on and on is not listed whole. */
export const MAX_TOOL_PAGES = 50;

/**
 * tools/list's result as it came: every tool object kept whole (the SDK's own schema would drop members
 * it does not know, and the digest is over the tools as returned).
 */
const ToolsPage = z.looseObject({
  tools: z.array(z.record(z.string(), z.unknown())),
  nextCursor: z.string().optional(),
});

export interface ProbeLimits {
  /** All the probe's answers together. */
  budgetBytes: number;
  timeoutMs: number;
}

/**
 * Probes an MCP server's Streamable HTTP endpoint with the official client: initialize, then tools/list
 * over every page, the tools digested as `toolsDigest` says. A server whose initialize result declares
 * no tools capability answers with no tools (an empty list).
 */
export async function probeMcp(
  policy: WebhookNetworkPolicy,
  url: string,
  limits: ProbeLimits,
  signal: AbortSignal,
): Promise<ProbeFinding> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: probeFetch(policy, limits.budgetBytes, signal),
  });
  const client = new Client({ name: 'agent-registry-probe', version: '1' }, { capabilities: {} });
  const options = { signal, timeout: limits.timeoutMs };
  let initialized = false;
  try {
    await client.connect(transport, options);
    initialized = true;
    const tools: Record<string, unknown>[] = [];
    if (client.getServerCapabilities()?.tools !== undefined) {
      let cursor: string | undefined;
      for (let page = 0; ; page += 1) {
        if (page === MAX_TOOL_PAGES)
          return { status: 'answers', reason: `tools/list had more than ${MAX_TOOL_PAGES} pages` };
        const result = await client.request(
          { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
          ToolsPage,
          options,
        );
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
    }
    return { status: 'answers', tools: { count: tools.length, digest: toolsDigest(tools) } };
  } catch (error) {
    if (initialized && !signal.aborted && !(error instanceof ProbeNetworkError))
      // It answered initialize: an MCP server, whose tools could not be listed whole.
      return { status: 'answers', reason: `tools/list failed: ${message(error)}` };
    return { status: classifyMcpFailure(error, signal), reason: message(error) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** What a failed initialize says about the endpoint. */
function classifyMcpFailure(error: unknown, signal: AbortSignal): ProbeFinding['status'] {
  if (signal.aborted || error instanceof ProbeNetworkError) return 'unreachable';
  if (error instanceof UnauthorizedError) return 'needs_auth';
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401 || error.code === 403) return 'needs_auth';
    // The service is there but failing, or a gateway could not reach it: not an answer either way.
    if (error.code !== undefined && error.code >= 500) return 'unreachable';
  }
  // Anything else (an HTML page, a 404, an answer too large, JSON that is not JSON-RPC) is HTTP but not MCP.
  return 'not_mcp';
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
