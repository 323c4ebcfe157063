import { INVOCATION_LIMITS } from '@agent-registry/protocol/limits';
import type { Command } from 'commander';
import { contextOf } from '../context.js';
import { withExamples } from '../help.js';
import { agentClient } from '../registry.js';
import { integerIn } from './discover.js';

export function registerTasks(program: Command): void {
  const tasks = program
    .command('tasks')
    .description("Tasks: this agent's pending queue (list), or one task this agent invoked (get)");

  const list = tasks
    .command('list', { isDefault: true })
    .description('Pending tasks waiting for this queue-mode agent (read only: nothing is accepted)')
    .option(
      '--limit <n>',
      `at most this many, 1-${INVOCATION_LIMITS.pendingTasksMaxLimit} (default ${INVOCATION_LIMITS.pendingTasksDefaultLimit})`,
      integerIn(1, INVOCATION_LIMITS.pendingTasksMaxLimit),
    )
    .option(
      '--wait <seconds>',
      `wait up to this long for a task to arrive, 0-${INVOCATION_LIMITS.pendingTasksMaxWaitSeconds}`,
      integerIn(0, INVOCATION_LIMITS.pendingTasksMaxWaitSeconds),
    )
    .action(async (options: { limit?: number; wait?: number }, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      const progress = options.wait
        ? cli.out.progress(`waiting up to ${options.wait}s for a task`)
        : undefined;
      let pending;
      try {
        pending = await client.pollTasks({
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
          ...(options.wait !== undefined ? { wait: options.wait } : {}),
        });
      } finally {
        progress?.done();
      }
      const rows = Array.isArray(pending) ? pending : ((pending as { tasks?: unknown[] }).tasks ?? []);
      cli.out.result({ tasks: rows }, () =>
        cli.out.table(
          rows as { task_id: string; capability: string; caller_did: string; deadline_at: number }[],
          [
            { header: 'task', value: (task) => task.task_id },
            { header: 'capability', value: (task) => task.capability },
            { header: 'caller', value: (task) => task.caller_did, max: 90 },
            { header: 'deadline', value: (task) => new Date(task.deadline_at).toISOString() },
          ],
          'no pending tasks',
        ),
      );
    });
  withExamples(list, 'agent-registry tasks', 'agent-registry tasks --wait 30 --json');

  const get = tasks
    .command('get')
    .description('One task this agent created by invoking: status, output or error')
    .argument('<task-id>')
    .action(async (taskId: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      const task = await client.getTask(taskId);
      cli.out.result(task, () => {
        const view = task as Record<string, unknown>;
        cli.out.fields(
          Object.entries(view)
            .filter(([, value]) => typeof value !== 'object' || value === null)
            .map(([name, value]) => [
              name,
              name.endsWith('_at') && typeof value === 'number'
                ? new Date(value).toISOString()
                : (value as string | number | boolean | null),
            ]),
        );
        for (const [name, value] of Object.entries(view)) {
          if (typeof value === 'object' && value !== null) {
            cli.out.line(`${name}:`);
            cli.out.line(JSON.stringify(value, null, 2));
          }
        }
      });
    });
  withExamples(get, 'agent-registry tasks get 0193f1c2-7d4e-7a10-9c55-2f3b7b1e8a90');
  withExamples(tasks, 'agent-registry tasks', 'agent-registry tasks get <task-id> --json');
}
