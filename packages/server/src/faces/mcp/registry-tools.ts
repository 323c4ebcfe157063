import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { AgentProfile } from '../../http/schemas/agents.js';
import { InvokeResponse } from '../../http/schemas/invocation.js';
import { ReputationStats, ReviewsPage, ReviewsQuery } from '../../http/schemas/reviews.js';
import { SearchQuery, SearchResponse } from '../../http/schemas/search.js';
import { SEARCH_RULES } from '../../services/discovery-rules.js';
import { LIMITS } from '../../services/limits.js';
import type { SearchRequest } from '../../services/search.js';
import { invokeArguments, invokeThroughBroker } from '../invocation.js';
import { ArgumentValidator, selfContained } from '../schemas.js';
import {
  errorResult,
  outcomeResult,
  missingToken,
  structuredResult,
  type FaceTool,
  type ToolCall,
} from './tool.js';

const Did = Type.String({ minLength: 1, maxLength: 512, description: 'did:web:... or did:pkh:...' });

/** Tags as a JSON array here; the search service takes the comma-separated form of the REST query. */
const SearchArguments = Type.Object({
  ...SearchQuery.properties,
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tagMaxLength }), {
      minItems: 1,
      maxItems: SEARCH_RULES.tagsMaxCount,
      description: 'An agent matches if it has any of these tags (case-insensitive)',
    }),
  ),
});
const DidArguments = Type.Object({ did: Did });
const ReviewsArguments = Type.Object({ did: Did, ...ReviewsQuery.properties });

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

function tool<T>(
  definition: Omit<FaceTool, 'call' | 'inputSchema'> & { input: Parameters<typeof selfContained>[0] },
  run: (args: T, call: ToolCall) => Promise<CallToolResult>,
): FaceTool {
  const validator = new ArgumentValidator<T>(selfContained(definition.input));
  const { input: _input, ...rest } = definition;
  return {
    ...rest,
    inputSchema: validator.schema,
    call: async (args, call) => {
      try {
        return await run(validator.parse(args), call);
      } catch (error) {
        return errorResult(error, call);
      }
    },
  };
}

/** The registry's own tools at POST /mcp: thin calls into the services the REST routes use. */
export function registryTools(ctx: AppContext): FaceTool[] {
  return [
    tool<Omit<SearchRequest, 'tags'> & { tags?: string[] }>(
      {
        name: 'search_agents',
        title: 'Search agents',
        description:
          'Find active agents by full text (q), capability type, tags and minimum reputation. ' +
          'Returns summaries with each capability and its JSON schemas; page with limit and cursor (pass next_cursor back) or offset.',
        input: SearchArguments,
        outputSchema: selfContained(SearchResponse),
        annotations: readOnly,
      },
      async ({ tags, ...query }) => {
        const found = await ctx.search.search(
          tags === undefined ? query : { ...query, tags: tags.join(',') },
        );
        const names = found.agents.map((agent) => `${agent.name} (${agent.did})`).join(', ');
        return structuredResult(
          `${found.total} agent(s) match; showing ${found.agents.length}${names ? `: ${names}` : ''}`,
          { ...found },
        );
      },
    ),
    tool<{ did: string }>(
      {
        name: 'get_agent',
        title: 'Read an agent',
        description:
          'The profile of one agent: capabilities with their input/output JSON schemas, whether and how it ' +
          'accepts invocations, and its reputation score, mean rating and review count.',
        input: DidArguments,
        outputSchema: selfContained(AgentProfile),
        annotations: readOnly,
      },
      async ({ did }) => {
        const profile = await ctx.agents.getProfile(did);
        const types = profile.capabilities.map((capability) => capability.type).join(', ');
        return structuredResult(
          `${profile.name} (${profile.status}; reputation ${profile.reputation_score}); capabilities: ${types}`,
          { ...profile },
        );
      },
    ),
    {
      name: 'invoke_agent',
      title: 'Invoke an agent',
      description:
        'Call a capability of another agent through the registry and wait for its output (same broker, ' +
        'limits and errors as POST /api/invoke; input at most 1 MiB of JSON and must match the ' +
        "capability's input_schema). Acts as the agent whose registry token is sent as " +
        '"Authorization: Bearer <token>" on the MCP HTTP request. A failed or timed-out invocation ' +
        'is an error result naming the outcome and the task id.',
      inputSchema: invokeArguments.schema,
      outputSchema: selfContained(InvokeResponse),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
      call: async (args, call) => {
        const caller = call.caller;
        if (caller === null) return missingToken('invoke_agent');
        try {
          const outcome = await invokeThroughBroker(ctx, caller, args, call.signal);
          if (!outcome.ok) return outcomeResult(outcome);
          return structuredResult(`completed (task ${outcome.result.task_id})`, { ...outcome.result });
        } catch (error) {
          return errorResult(error, call);
        }
      },
    },
    tool<{ did: string; limit?: number; offset?: number }>(
      {
        name: 'get_reviews',
        title: 'Read reviews of an agent',
        description:
          'Reviews of an agent, newest first (rating 1-10, comment, verified when tied to a call).',
        input: ReviewsArguments,
        outputSchema: selfContained(ReviewsPage),
        annotations: readOnly,
      },
      async ({ did, ...page }) => {
        const reviews = await ctx.reviews.listForAgent(did, page);
        return structuredResult(`${reviews.total} review(s); showing ${reviews.reviews.length}`, {
          ...reviews,
        });
      },
    ),
    tool<{ did: string }>(
      {
        name: 'get_reputation',
        title: 'Read the reputation of an agent',
        description: 'Reputation score (0-100), mean rating and the rating distribution of an agent.',
        input: DidArguments,
        outputSchema: selfContained(ReputationStats),
        annotations: readOnly,
      },
      async ({ did }) => {
        const stats = await ctx.reputation.get(did);
        return structuredResult(`reputation ${stats.reputation_score}, mean rating ${stats.average_rating}`, {
          ...stats,
        });
      },
    ),
  ];
}
