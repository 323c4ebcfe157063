import { Option, type Command } from 'commander';
import { contextOf } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { readJsonObjectArgument } from '../input.js';
import { agentClient, anonymousClient } from '../registry.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Longest path accepted: the registry's own URL limits are shorter. */
const PATH_MAX = 8192;

export function registerApi(program: Command): void {
  const command = program
    .command('api')
    .description(
      "Send one request to any route of the registry with this agent's token, and print the answer",
    )
    .argument('<method>', METHODS.join(', '))
    .argument('<path>', 'the route with its query, e.g. /api/agents/search?q=translate')
    .option('--data <json>', 'JSON body: inline, @file.json, or @- for stdin')
    .addOption(new Option('--anonymous', 'send no token (a public route, or no agent registered here)'))
    .action(
      async (
        method: string,
        path: string,
        options: { data?: string; anonymous?: boolean },
        self: Command,
      ) => {
        const cli = contextOf(self);
        const verb = method.toUpperCase();
        if (!(METHODS as readonly string[]).includes(verb))
          throw new UsageError(`unknown method "${method}"; use ${METHODS.join(', ')}`, 'UNKNOWN_METHOD');
        if (!path.startsWith('/') || path.startsWith('//') || path.length > PATH_MAX)
          throw new UsageError(
            `the path must start with one / and be a route of the registry, e.g. /api/agents/search?q=x; got "${path.slice(0, 100)}"`,
            'INVALID_PATH',
          );
        const body = options.data === undefined ? undefined : readJsonObjectArgument(options.data, '--data');
        const client = options.anonymous ? await anonymousClient(cli) : (await agentClient(cli)).client;
        const answer = await client.request<string>(verb, path, {
          auth: !options.anonymous,
          text: true,
          headers: { accept: 'application/json, text/plain;q=0.5' },
          ...(body === undefined ? {} : { body }),
        });
        // A JSON answer is printed indented; anything else (metrics, a signed note) as it came.
        let printed = answer;
        try {
          printed = JSON.stringify(JSON.parse(answer), null, 2);
        } catch {
          // Not JSON.
        }
        process.stdout.write(printed.endsWith('\n') ? printed : `${printed}\n`);
      },
    );
  withExamples(
    command,
    'agent-registry api GET /api/agents/search?q=translate',
    'agent-registry api GET /api/reviews/my',
    `agent-registry api POST /api/reviews --data '{"target_did": "did:web:...", "rating": 8}'`,
    'agent-registry api GET /healthz --anonymous',
  );
}
