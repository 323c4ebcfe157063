import { INVOCATION_LIMITS } from '@agent-registry/protocol/limits';
import type { ServeOptions } from '@agent-registry/sdk';
import type { Command } from 'commander';
import { contextOf, type CliContext } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { loadHandlerModule } from '../handler-module.js';
import { withExamples } from '../help.js';
import { agentClient } from '../registry.js';
import { integerIn } from './discover.js';
import { CALLER_ONLY } from './init.js';

type WorkerEvent = Record<string, unknown>;

/** One line per worker event: readable on stderr, or a JSON line on stdout with --json. */
function reporter(cli: CliContext): (event: string, fields: WorkerEvent, text: string) => void {
  return (event, fields, text) => {
    if (cli.out.json) cli.out.writeJson({ event, at: Date.now(), ...fields }, false);
    else process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${text}\n`);
  };
}

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description(
      "Serve this agent's capabilities from a handler module in queue mode (long polling: no public endpoint needed)",
    )
    .argument('<module>', 'a .js/.mjs file exporting { <capability>: async (input, ctx) => output }')
    .option('--concurrency <n>', 'tasks handled at once, 1-100', integerIn(1, 100), 1)
    .option(
      '--wait <seconds>',
      `long-poll wait, 1-${INVOCATION_LIMITS.pendingTasksMaxWaitSeconds}`,
      integerIn(1, INVOCATION_LIMITS.pendingTasksMaxWaitSeconds),
      30,
    )
    .action(async (modulePath: string, options: { concurrency: number; wait: number }, self: Command) => {
      const cli = contextOf(self);
      const report = reporter(cli);
      const { client, did } = await agentClient(cli);
      const profile = await client.getAgent(did);
      const published = profile.capabilities
        .map((capability) => capability.type)
        .filter((type) => type !== CALLER_ONLY);
      if (published.length === 0) {
        throw new UsageError(
          `${did} only calls other agents: its profile declares no capability to serve. Add capabilities to profile.json (e.g. {"type": "translation"}) and run \`agent-registry update\`, then start the worker.`,
          'NOTHING_TO_SERVE',
        );
      }
      const capabilities = await loadHandlerModule(modulePath, published);
      const unpublished = Object.keys(capabilities).filter((type) => !published.includes(type));
      if (unpublished.length > 0) {
        cli.out.warn(
          `handlers for capabilities not in the published profile (callers cannot find them): ${unpublished.join(', ')}`,
        );
      }
      const unserved = published.filter((type) => !Object.hasOwn(capabilities, type));
      if (unserved.length > 0) {
        cli.out.warn(
          `published capabilities with no handler in ${modulePath} (their calls will fail with "no handler"): ${unserved.join(', ')}`,
        );
      }
      const invocation = await client.getInvocation(did);
      if (!invocation.enabled || invocation.delivery_mode !== 'queue') {
        await client.setInvocation({ enabled: true, delivery_mode: 'queue' }, did);
        report(
          'invocation_configured',
          { delivery_mode: 'queue', previous: invocation.enabled ? invocation.delivery_mode : 'disabled' },
          `invocation set to queue mode (was ${invocation.enabled ? invocation.delivery_mode : 'disabled'})`,
        );
      }

      const { serve } = await import('@agent-registry/sdk');
      const worker = serve({
        client,
        capabilities: capabilities as ServeOptions['capabilities'],
        concurrency: options.concurrency,
        waitSeconds: options.wait,
      });
      worker.on('completed', ({ task }) =>
        report(
          'completed',
          { task_id: task.task_id, capability: task.capability, caller_did: task.caller_did },
          `✓ task ${task.task_id} ${task.capability} for ${task.caller_did}`,
        ),
      );
      worker.on('failed', ({ task, error }) =>
        report(
          'failed',
          { task_id: task.task_id, capability: task.capability, caller_did: task.caller_did, error },
          `✗ task ${task.task_id} ${task.capability}: ${error}`,
        ),
      );
      worker.on('error', (error) => {
        const message = error instanceof Error ? error.message : String(error);
        report('error', { message }, `error: ${message}`);
      });
      let lostConnection = false;
      worker.on('disconnected', (error) => {
        lostConnection = true;
        const message = error instanceof Error ? error.message : String(error);
        report('disconnected', { message }, `registry unreachable (${message}); reconnecting with backoff…`);
      });
      worker.on('connected', () =>
        report('connected', {}, lostConnection ? 'reconnected to the registry' : 'connected to the registry'),
      );

      report(
        'ready',
        {
          did,
          registry: cli.registry().url,
          capabilities: Object.keys(capabilities),
          concurrency: options.concurrency,
        },
        `worker for ${did} serving ${Object.keys(capabilities).join(', ')} (concurrency ${options.concurrency}); Ctrl-C stops`,
      );

      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) {
            // A second signal: the user does not want to wait for in-flight tasks.
            process.exit(130);
          }
          stopping = true;
          report('stopping', { signal }, `${signal}: finishing in-flight tasks (again to quit at once)`);
          worker.close().then(resolve, (error: unknown) => {
            report('error', { message: String(error) }, `error while stopping: ${String(error)}`);
            process.exitCode = EXIT.failed;
            resolve();
          });
        };
        process.on('SIGINT', () => stop('SIGINT'));
        process.on('SIGTERM', () => stop('SIGTERM'));
      });
      report('stopped', {}, 'stopped: the registry shows the agent offline until a worker polls again');
    });
  withExamples(
    command,
    'agent-registry worker ./handler.mjs',
    'agent-registry worker ./handler.mjs --concurrency 4 --json   # one JSON line per event',
    'cat handler.mjs   # export default { echo: async (input) => ({ echoed: input }) }',
  );
}
