import { INVOCATION_LIMITS } from '@agent-registry/protocol/limits';
import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { withExamples } from '../help.js';
import { readJsonObjectArgument } from '../input.js';
import { agentClient, resolveAgent } from '../registry.js';
import { UsageError } from '../exit-codes.js';
import { isRemoteEntryId } from '../remote-entry.js';
import { integerIn } from './discover.js';

export function registerInvoke(program: Command): void {
  const { timeoutMinMs, timeoutMaxMs, timeoutDefaultMs } = INVOCATION_LIMITS;
  const command = program
    .command('invoke')
    .description("Call another agent's capability through the registry and print its output")
    .argument('<did>', 'the agent to call: its DID or its handle (com.example/translator)')
    .argument('<capability>', 'the capability type, e.g. translation')
    .option('--input <json>', 'input object: inline JSON, @file.json, or @- for stdin', '{}')
    .option(
      '--timeout <ms>',
      `how long to wait for the result, ${timeoutMinMs}-${timeoutMaxMs} ms (default ${timeoutDefaultMs})`,
      integerIn(timeoutMinMs, timeoutMaxMs),
    )
    .action(
      async (
        ref: string,
        capability: string,
        options: { input: string; timeout?: number },
        self: Command,
      ) => {
        const cli = contextOf(self);
        if (isRemoteEntryId(ref))
          throw new UsageError(
            `${ref} is a remote entry: it lives at another registry or host, and this registry does not call it. ` +
              `\`agent-registry show '${ref}'\` prints where it lives and its endpoints; call it there.`,
          );
        const input = readJsonObjectArgument(options.input, '--input');
        const { client } = await agentClient(cli);
        const did = await resolveAgent(cli, ref);
        const progress = cli.out.progress(`waiting for ${capability} from ${did}`);
        const started = Date.now();
        let response;
        try {
          response = await client.invokeRaw(did, capability, input, {
            ...(options.timeout !== undefined ? { timeoutMs: options.timeout } : {}),
          });
        } catch (error) {
          progress.done();
          throw error;
        }
        progress.done(
          `task ${response.task_id} ${response.status} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
        );
        cli.out.result(response, () => cli.out.line(JSON.stringify(response.output ?? null, null, 2)));
      },
    );
  withExamples(
    command,
    `agent-registry invoke did:web:localhost%3A8080:agent:4f6c... echo --input '{"text": "hello"}'`,
    'agent-registry invoke did:pkh:eip155:1:0xAb58... translation --input @request.json --timeout 60000',
    `echo '{"text": "hi"}' | agent-registry invoke did:web:... echo --input @- --json | jq .output`,
  );
}
