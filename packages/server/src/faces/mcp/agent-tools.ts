import type { AppContext } from '../../context.js';
import type { Capability } from '@agent-registry/protocol';
import type { AgentProfile } from '../../modules/agents/schemas.js';
import { capabilityTitle } from '../../modules/capabilities/capability-title.js';
import { invocable, invokeThroughBroker } from '../invocation.js';
import type { JsonSchema } from '../schemas.js';
import {
  errorResult,
  getTaskAt,
  outcomeResult,
  missingToken,
  structuredResult,
  type FaceTool,
} from './tool.js';

/** MCP tool names: 1-128 characters of A-Z a-z 0-9 _ - . (MCP 2025-11-25, "Tool names"). */
const TOOL_NAME_MAX = 128;
const NOT_ALLOWED = /[^A-Za-z0-9_.-]/g;

/**
 * Capability type -> tool name: every character MCP does not allow becomes "_", the result is cut
 * to 128 characters, and a name already taken by an earlier capability gets "_2", "_3", ... (cut
 * first so the suffix survives). Deterministic for a given profile, so stateless nodes agree.
 */
export function toolNames(types: readonly string[]): string[] {
  const taken = new Set<string>();
  return types.map((type) => {
    const base = type.replace(NOT_ALLOWED, '_').slice(0, TOOL_NAME_MAX) || '_';
    let name = base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, TOOL_NAME_MAX - suffix.length)}${suffix}`;
    }
    taken.add(name);
    return name;
  });
}

/** MCP wants an object schema; a capability without one takes any JSON object (as the broker does). */
function inputSchemaOf(capability: Capability): JsonSchema {
  const schema = capability.input_schema;
  if (schema == null) return { type: 'object' };
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  if (rest.type === 'object') return rest;
  if (rest.type === undefined) return { type: 'object', ...rest };
  // A non-object input_schema can never be met by the object input the broker requires; say so as is.
  return { type: 'object', allOf: [rest] };
}

function outputSchemaOf(capability: Capability): JsonSchema | undefined {
  const schema = capability.output_schema;
  if (schema == null || schema.type !== 'object') return undefined;
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}

/** The agent's availability when the tools were listed, for a model choosing whether to call (docs/availability.md). */
function availabilitySentence(profile: AgentProfile): string {
  const { status, last_seen_at: lastSeen } = profile.availability;
  const seen = lastSeen === null ? '' : ` (worker last seen ${new Date(lastSeen).toISOString()})`;
  if (status === 'online') return `Availability when listed: online${seen}.`;
  if (status === 'offline') return `Availability when listed: offline${seen}; a call may time out.`;
  return 'Availability when listed: unknown.';
}

/** One tool per capability of an invocable agent, for POST /mcp/agents/{did}. */
export function agentTools(ctx: AppContext, profile: AgentProfile): FaceTool[] {
  if (!invocable(profile)) return [];
  const names = toolNames(profile.capabilities.map((capability) => capability.type));
  const taskTool = getTaskAt(ctx.config.identity.publicUrl);
  return profile.capabilities.map((capability, index) => {
    const name = names[index] as string;
    const outputSchema = outputSchemaOf(capability);
    return {
      name,
      title: `${capabilityTitle(capability.type)} (${profile.name})`,
      // A client that mixes tools of several servers still knows whose capability this is.
      description:
        `${(capability.description ?? capabilityTitle(capability.type)).replace(/\.\s*$/, '')}. ` +
        `The "${capability.type}" capability of the agent ${profile.name} (${profile.did}), called through ` +
        'the registry as the agent whose registry token is sent on the MCP HTTP request; the arguments ' +
        "must match the capability's input_schema. " +
        availabilitySentence(profile),
      inputSchema: inputSchemaOf(capability),
      _meta: { 'agent-registry/availability': profile.availability },
      ...(outputSchema === undefined ? {} : { outputSchema }),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
      call: async (args, call) => {
        const caller = call.caller;
        if (caller === null) return missingToken(name);
        try {
          const outcome = await invokeThroughBroker(
            ctx,
            caller,
            { target_did: profile.did, capability: capability.type, input: args ?? {} },
            call.signal,
            call.address,
          );
          if (!outcome.ok) return outcomeResult(outcome, taskTool);
          return structuredResult(
            `${capability.type} completed (task ${outcome.result.task_id})`,
            outcome.result.output,
          );
        } catch (error) {
          return errorResult(error, call, taskTool);
        }
      },
    };
  });
}
