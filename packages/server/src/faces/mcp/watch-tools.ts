import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import {
  CreateWatchRequest,
  CreatedWatch,
  WatchIdParams,
  WatchesPage,
  WatchesQuery,
} from '../../modules/watches/schemas.js';
import { selfContained } from '../schemas.js';
import { structuredResult } from './tool.js';
import { agentTool, argumentsSchema, readOnly, writes } from './tool-builders.js';

const WatchIdArguments = Type.Object({ watch_id: WatchIdParams.properties.id });

/** Watches over MCP: the REST routes' service, so the limits and messages are the same (docs/watches.md). */
export function watchTools(ctx: AppContext) {
  return [
    agentTool<CreateWatchRequest>(
      {
        name: 'watch',
        title: 'Be told when an agent or a remote entry changes',
        description:
          'Subscribe to changes of an agent (DID: agent.updated, agent.deactivated, agent.availability_changed) ' +
          'or of a remote entry (entry id: entry.tools_changed, entry.status_changed): each event is POSTed to ' +
          'url as a Standard Webhooks message signed with the returned secret, shown only in this result ' +
          '(same as POST /api/watches). Acts as the agent whose registry token is sent on the MCP HTTP request.',
        input: argumentsSchema(CreateWatchRequest, {
          target:
            "DID of an agent (from search_agents) or id of a remote entry (a federated search result's id)",
        }),
        outputSchema: selfContained(CreatedWatch),
        annotations: { ...writes, openWorldHint: true },
      },
      async (request, caller) => {
        const watch = await ctx.watches.create(caller, request);
        return structuredResult(`watch ${watch.id} of ${watch.target}: ${watch.events.join(', ')}`, {
          ...watch,
        });
      },
    ),
    agentTool<WatchesQuery>(
      {
        name: 'list_watches',
        title: 'Your watches',
        description:
          'The watches of the calling agent, oldest first, without their secrets (same as GET /api/watches). ' +
          'Acts as the agent whose registry token is sent on the MCP HTTP request.',
        input: argumentsSchema(WatchesQuery),
        outputSchema: selfContained(WatchesPage),
        annotations: readOnly,
      },
      async (query, caller) => {
        const page = await ctx.watches.list(caller, query);
        return structuredResult(`${page.watches.length} watches`, { ...page });
      },
    ),
    agentTool<Static<typeof WatchIdArguments>>(
      {
        name: 'remove_watch',
        title: 'Delete one of your watches',
        description:
          'Stop a watch: its pending deliveries are dropped (same as DELETE /api/watches/{id}). Acts as the ' +
          'agent whose registry token is sent on the MCP HTTP request.',
        input: argumentsSchema(WatchIdArguments, {
          watch_id: 'id of your watch, from watch or list_watches',
        }),
        outputSchema: selfContained(Type.Object({ deleted: Type.String() })),
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      async ({ watch_id }, caller) => {
        await ctx.watches.remove(caller, watch_id);
        return structuredResult(`watch ${watch_id} deleted`, { deleted: watch_id });
      },
    ),
  ];
}
