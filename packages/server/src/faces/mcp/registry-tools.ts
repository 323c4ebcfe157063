import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../kernel/errors.js';
import { AgentProfile } from '../../modules/agents/schemas.js';
import { InvokeRequest, InvokeResponse, TaskParams, TaskResponse } from '../../modules/tasks/schemas.js';
import {
  EditReviewRequest,
  ReputationStats,
  Review,
  ReviewIdParams,
  ReviewsPage,
  ReviewsQuery,
  SubmitReviewRequest,
  type EditReviewCommand,
  type SubmitReviewCommand,
} from '../../modules/reviews/schemas.js';
import { SearchResponse, type SearchRequest } from '../../modules/search/search-schemas.js';
import { ReportReceipt, ReportRequest } from '../../modules/moderation/schemas.js';
import { REVIEW_RULES } from '../../kernel/discovery-rules.js';
import { invokeThroughBroker } from '../invocation.js';
import { SearchArguments, parseSearchArguments } from '../search-arguments.js';
import { selfContained } from '../schemas.js';
import {
  errorResult,
  missingToken,
  outcomeResult,
  structuredResult,
  toolError,
  type FaceTool,
} from './tool.js';
import { agentTool, argumentsSchema, Did, published, readOnly, tool, writes } from './tool-builders.js';
import { watchTools } from './watch-tools.js';

const DidArguments = Type.Object({ did: Did });
const ReviewsArguments = Type.Object({ did: Did, ...ReviewsQuery.properties });
const TaskArguments = Type.Object({ task_id: TaskParams.properties.id });
const EditReviewArguments = Type.Object({
  review_id: ReviewIdParams.properties.review_id,
  ...EditReviewRequest.properties,
});

const reviewSummary = (what: string, review: { review_id: string; target_did: string; rating: number }) =>
  `review ${review.review_id} of ${review.target_did} ${what}: rating ${review.rating}`;

/** A second review of the same agent: the MCP user is pointed at edit_review with the id it needs. */
function reviewExists(existing: { review_id: string; target_did: string } | undefined, error: ApiError) {
  if (existing === undefined) return toolError(error.code, error.details);
  return toolError(
    error.code,
    `You have already reviewed ${existing.target_did} (review_id ${existing.review_id}); each agent ` +
      `reviews another once. Change that review with edit_review within ${REVIEW_RULES.editWindowMs / 60_000} ` +
      'minutes of submitting it.',
  );
}

/** The registry's own tools at POST /mcp: thin calls into the services the REST routes use. */
export function registryTools(ctx: AppContext): FaceTool[] {
  return [
    tool<SearchRequest>(
      {
        name: 'search_agents',
        title: 'Search agents',
        description:
          'Find active agents by full text (q), capability type, tags and minimum reputation. ' +
          'Pass available "true" to get only agents whose worker is online now, or sort "availability" to ' +
          'get those first (docs/availability.md). Pass scope "federated" to include agents that live at ' +
          'other registries (each result names its home_registry and provenance; invoke those there). ' +
          'Pass domain (e.g. "example.com") to get only agents that proved they hold that domain. ' +
          'Returns summaries with each capability and its JSON schemas; page with limit and cursor (pass next_cursor back) or offset.',
        input: argumentsSchema(SearchArguments),
        // The search page validates its form with the same function.
        parse: parseSearchArguments,
        outputSchema: selfContained(SearchResponse),
        annotations: readOnly,
      },
      async (query) => {
        const found = await ctx.search.search(query);
        const names = found.agents
          .map((agent) => `${agent.name} (${agent.did}; ${agent.availability.status})`)
          .join(', ');
        return structuredResult(
          `${found.total} agent(s) match; showing ${found.agents.length}${names ? `: ${names}` : ''}`,
          { ...found },
        );
      },
    ),
    tool<Static<typeof DidArguments>>(
      {
        name: 'get_agent',
        title: 'Read an agent',
        description:
          'The profile of one agent: capabilities with their input/output JSON schemas, whether and how it ' +
          'accepts invocations, and its reputation score, mean rating and review count. `did` may also be ' +
          "the agent's handle, such as com.example/translator (docs/identity.md).",
        input: argumentsSchema(DidArguments),
        outputSchema: selfContained(AgentProfile),
        annotations: readOnly,
      },
      async ({ did }) => {
        // A handle (com.example/translator: a "/" and no ":") names the agent as well as its DID.
        const profile = await ctx.agents.getProfile(
          did.includes('/') && !did.includes(':') ? await ctx.domains.resolveHandle(did) : did,
        );
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
        'is an error result naming the outcome and the task id; read the task later with get_task, and ' +
        'review the agent with submit_review citing the task id.',
      // Validated by the broker's own validator (invokeThroughBroker); this copy only adds descriptions.
      inputSchema: published(
        argumentsSchema(InvokeRequest, {
          capability: "One of the target's capability types (get_agent lists them with their schemas)",
        }),
      ),
      outputSchema: selfContained(InvokeResponse),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
      call: async (args, call) => {
        const caller = call.caller;
        if (caller === null) return missingToken('invoke_agent');
        try {
          const outcome = await invokeThroughBroker(ctx, caller, args, call.signal, call.address);
          if (!outcome.ok) return outcomeResult(outcome);
          return structuredResult(`completed (task ${outcome.result.task_id})`, { ...outcome.result });
        } catch (error) {
          return errorResult(error, call);
        }
      },
    },
    tool<Static<typeof ReviewsArguments>>(
      {
        name: 'get_reviews',
        title: 'Read reviews of an agent',
        description:
          'Reviews of an agent, newest first (rating 1-10, comment, verified when tied to a call).',
        input: argumentsSchema(ReviewsArguments),
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
    tool<Static<typeof DidArguments>>(
      {
        name: 'get_reputation',
        title: 'Read the reputation of an agent',
        description: 'Reputation score (0-100), mean rating and the rating distribution of an agent.',
        input: argumentsSchema(DidArguments),
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
    agentTool<Static<typeof TaskArguments>>(
      {
        name: 'get_task',
        title: 'Read a task you created',
        description:
          'Status (pending, processing, completed, failed, timeout), output or error of an invocation you ' +
          'made with invoke_agent (same as GET /api/tasks/{id}; only the agent that created the task may ' +
          'read it). Acts as the agent whose registry token is sent on the MCP HTTP request.',
        input: argumentsSchema(TaskArguments, {
          task_id:
            'task_id of an invocation you made, from invoke_agent (its result, or its error result when the ' +
            'call failed or timed out)',
        }),
        outputSchema: selfContained(TaskResponse),
        annotations: readOnly,
      },
      async ({ task_id }, caller) => {
        const task = await ctx.invocation.getTask(caller, task_id);
        return structuredResult(`task ${task.task_id}: ${task.status}`, { ...task });
      },
    ),
    agentTool<SubmitReviewCommand>(
      {
        name: 'submit_review',
        title: 'Review an agent',
        description:
          'Rate another agent from 1.00 to 10.00, once per agent (same rules as POST /api/reviews). Give the ' +
          'task_id of an invoke_agent call you made to it as call_record_id to make the review verified. ' +
          'Acts as the agent whose registry token is sent on the MCP HTTP request.',
        input: argumentsSchema(SubmitReviewRequest, {
          target_did: 'DID of the agent you are reviewing (not your own)',
          call_record_id:
            'task_id of a completed invoke_agent call you made to target_did; makes the review verified ' +
            '(verified reviews weigh double)',
        }),
        outputSchema: selfContained(Review),
        annotations: writes,
      },
      async (review, caller) => {
        try {
          const stored = await ctx.reviews.submit(caller, review);
          return structuredResult(reviewSummary('submitted', stored), { ...stored });
        } catch (error) {
          if (!(error instanceof ApiError) || error.code !== 'REVIEW_EXISTS') throw error;
          return reviewExists(await ctx.reviews.ownReviewOf(caller, review.target_did), error);
        }
      },
    ),
    agentTool<EditReviewCommand & { review_id: string }>(
      {
        name: 'edit_review',
        title: 'Edit your review',
        description:
          `Change the rating or comment of a review you wrote, within ${REVIEW_RULES.editWindowMs / 60_000} ` +
          `minutes of submitting it; the rating may move by at most ${(REVIEW_RULES.maxRatingChangeHundredths / 100).toFixed(1)} ` +
          'either way (same rules as PUT /api/reviews/{review_id}). Acts as the agent whose registry token is ' +
          'sent on the MCP HTTP request.',
        input: argumentsSchema(EditReviewArguments, {
          review_id: 'review_id of your review, from submit_review (or from its REVIEW_EXISTS error)',
          comment:
            `New comment, at most ${REVIEW_RULES.commentMaxLength} characters; leave it out (or null) to ` +
            'keep the current one, "" to remove it',
        }),
        outputSchema: selfContained(Review),
        annotations: writes,
      },
      async ({ review_id, ...edit }, caller) => {
        const stored = await ctx.reviews.edit(caller, review_id, edit);
        return structuredResult(reviewSummary('edited', stored), { ...stored });
      },
    ),
    agentTool<Static<typeof ReportRequest>>(
      {
        name: 'report_agent',
        title: "Report an agent to the registry's operator",
        description:
          'Report an agent (DID) or a remote entry (id) as malware, impersonation, spam, broken or other, once per ' +
          'target (same rules as POST /api/reports). Give the task_id of an invoke_agent call you made to it to ' +
          'make the report verified. Acts as the agent whose registry token is sent on the MCP HTTP request.',
        input: argumentsSchema(ReportRequest, {
          target: 'DID of the agent (or id of the remote entry) you report, as search_agents returns it',
          details: 'What you saw, read by the operator only',
          task_id: 'task_id of an invoke_agent call you made to target; makes the report verified',
        }),
        outputSchema: selfContained(ReportReceipt),
        annotations: writes,
      },
      async (report, caller, call) => {
        const receipt = await ctx.reports.submit(caller, report, { address: call.address });
        return structuredResult(`report ${receipt.id} of ${receipt.target}: ${receipt.state}`, {
          ...receipt,
        });
      },
    ),
    ...watchTools(ctx),
  ];
}
