import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Type, type TSchema } from '@sinclair/typebox';
import { REVIEW_RULES } from '../../kernel/discovery-rules.js';
import { forValidation } from '../../http/validation.js';
import type { AuthenticatedAgent } from '../../modules/agents/authentication.js';
import { ArgumentValidator, selfContained, type JsonSchema } from '../schemas.js';
import { errorResult, missingToken, type FaceTool, type ToolCall } from './tool.js';

export const Did = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'DID of the agent (did:web:... or did:pkh:...), as search_agents returns it',
});

/**
 * Descriptions for the arguments whose REST schema has none, so that a model knows what to put in each
 * (REST readers have the API reference around them). Only descriptions: the rules stay the REST ones.
 */
const ARGUMENT_HINTS: Record<string, string> = {
  min_reputation: 'Lowest reputation score (0-100) an agent must have',
  limit: 'How many results to return in this page',
  offset: 'How many results to skip; for later pages prefer cursor',
  order: 'asc or desc (default desc)',
  target_did: 'DID of the agent to call, as search_agents or get_agent return it',
  input: "The capability's input as a JSON object: must match the capability's input_schema; see get_agent",
  comment: `Optional text, at most ${REVIEW_RULES.commentMaxLength} characters`,
};

/**
 * The self-contained JSON Schema of a tool's arguments: every argument described, by `hints` first,
 * then by its REST description, then by ARGUMENT_HINTS.
 */
export function argumentsSchema(schema: TSchema, hints: Record<string, string> = {}): JsonSchema {
  // A whole-request example (with a made-up DID) is for people; a model would copy its values.
  const { $id: _id, examples: _examples, ...rest } = selfContained(schema);
  const properties = (rest.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, property] of Object.entries(properties)) {
    const description = hints[name] ?? property.description ?? ARGUMENT_HINTS[name];
    if (description !== undefined) property.description = description;
  }
  return rest;
}

/** The schema as clients see it: with every constraint, without the registry's own annotation. */
export const published = (schema: JsonSchema): JsonSchema =>
  JSON.parse(
    JSON.stringify(schema, (key, value: unknown) => (key === 'x-checked-by-service' ? undefined : value)),
  ) as JsonSchema;

export const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
/** A review, once more, is another edit (edit_count) or a conflict: not idempotent. */
export const writes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

/** A tool's definition; `parse` when its arguments are validated where another face validates them too. */
export type ToolDefinition<T> = Omit<FaceTool, 'call' | 'inputSchema'> & {
  input: JsonSchema;
  parse?: (args: unknown) => T;
};

export function tool<T>(
  definition: ToolDefinition<T>,
  run: (args: T, call: ToolCall) => Promise<CallToolResult>,
): FaceTool {
  const { input, parse: shared, ...rest } = definition;
  const parse = shared ?? validatorFor<T>(input);
  return {
    ...rest,
    inputSchema: published(input),
    call: async (args, call) => {
      try {
        return await run(parse(args), call);
      } catch (error) {
        return errorResult(error, call);
      }
    },
  };
}

/** A tool's own validator. Rules the service checks itself (a rating's range: INVALID_RATING) are left to it, as on REST. */
function validatorFor<T>(input: JsonSchema): (args: unknown) => T {
  const validator = new ArgumentValidator<T>(forValidation(input));
  return (args) => validator.parse(args);
}

/** A tool that acts as the agent whose token came with the MCP request. */
export function agentTool<T>(
  definition: ToolDefinition<T>,
  run: (args: T, caller: AuthenticatedAgent, call: ToolCall) => Promise<CallToolResult>,
): FaceTool {
  const inner = tool<T>(definition, (args, call) => run(args, call.caller as AuthenticatedAgent, call));
  // The token is asked for first: without it no argument could make the call succeed.
  return {
    ...inner,
    call: async (args, call) =>
      call.caller === null ? missingToken(definition.name) : inner.call(args, call),
  };
}
