import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { AuthenticatedAgent } from '../../modules/agents/authentication.js';
import { classifyError, logClassified, type ClassifiedError } from '../errors.js';
import type { TaskOutcome } from '../invocation.js';
import type { JsonSchema } from '../schemas.js';

/** The HTTP request a tool call arrived on: who sent it (if a token came with it), and when it ends. */
export interface ToolCall {
  caller: AuthenticatedAgent | null;
  /** The client's address (behind TRUST_PROXY, the forwarded one): invocations count input per address. */
  address: string;
  signal: AbortSignal;
  log: FastifyBaseLogger;
  requestId: string;
}

export interface FaceTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  /** Listed with the tool (MCP `_meta`), e.g. the agent's availability. */
  _meta?: Record<string, unknown>;
  call(args: Record<string, unknown> | undefined, call: ToolCall): Promise<CallToolResult>;
}

/** structuredContent plus a one-line summary and, for clients that read only text, the same JSON. */
export function structuredResult(summary: string, structured: Record<string, unknown>): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
  };
}

/** A tool error the model can read and act on: the registry's error code, then what to fix. */
export function toolError(code: string, details: string): CallToolResult {
  return { content: [{ type: 'text', text: `${code}: ${details}` }], isError: true };
}

export function missingToken(tool: string): CallToolResult {
  return toolError(
    'TOKEN_MISSING',
    `${tool} acts as a registered agent: send its registry token as the HTTP header ` +
      '"Authorization: Bearer <token>" on the MCP connection. The token comes with registration and ' +
      'from `agent-registry token` (the CLI) or the REST route POST /api/auth/token: no MCP tool issues ' +
      "one, since it takes a signature by the agent's key.",
  );
}

/** The tool that reads a task, as named in the next step of an error on /mcp. */
const GET_TASK = 'get_task';

/** The same, from a per-agent endpoint, which has only the agent's tools. */
export const getTaskAt = (publicUrl: string): string => `the get_task tool of ${publicUrl}/mcp`;

/** `_meta` member of a failed invocation that was never sent, the agent being offline (its last sighting). */
export const OFFLINE_META = 'agent-registry/offline_since';

/** The agent failed or did not answer in time: a tool result naming the outcome and the task. */
export function outcomeResult(
  outcome: TaskOutcome & { ok: false },
  taskTool: string = GET_TASK,
): CallToolResult {
  const what = outcome.outcome === 'timeout' ? 'timed out' : 'failed';
  if (outcome.offlineSince !== undefined) {
    // Never sent: reading the task later shows nothing new.
    return {
      ...toolError(outcome.code, `the invocation was not sent (task ${outcome.taskId}): ${outcome.reason}.`),
      _meta: { [OFFLINE_META]: outcome.offlineSince },
    };
  }
  return toolError(
    outcome.code,
    `the invocation ${what} (task ${outcome.taskId}): ${outcome.reason}. ` +
      `Read the task later with ${taskTool}.`,
  );
}

/**
 * The REST text of an error, except where it names an HTTP route that an MCP tool stands for: an MCP
 * user is pointed at the tool (REST keeps the route, which is what its clients call).
 */
function detailsForMcp(error: ClassifiedError, taskTool: string): string {
  const taskId = error.extra.task_id;
  if (error.code === 'SHUTTING_DOWN' && taskId !== undefined) {
    return `The registry is shutting down; read task ${taskId} later with ${taskTool}`;
  }
  return error.details;
}

/** Every thrown error becomes a tool error (faces/errors.ts classifies it); internals stay in the log. */
export function errorResult(error: unknown, call: ToolCall, taskTool: string = GET_TASK): CallToolResult {
  const classified = classifyError(error, { requestId: call.requestId });
  logClassified(call.log, classified, 'MCP tool failed');
  if (classified.kind === 'internal') {
    return toolError(
      classified.code,
      `The registry could not complete the call (request id ${call.requestId})`,
    );
  }
  return toolError(classified.code, detailsForMcp(classified, taskTool));
}
