import type { Command } from 'commander';
import type { WatchEventType } from '@agent-registry/sdk';
import { contextOf } from '../context.js';
import { withExamples } from '../help.js';
import { agentClient, resolveAgent } from '../registry.js';

const AGENT_EVENTS: WatchEventType[] = ['agent.updated', 'agent.deactivated', 'agent.availability_changed'];
const ENTRY_EVENTS: WatchEventType[] = ['entry.tools_changed', 'entry.status_changed'];

export function registerWatch(program: Command): void {
  const watch = program
    .command('watch')
    .description(
      "Watches: be told (signed webhooks) of an agent's or a remote entry's changes (docs/watches.md)",
    );

  const add = watch
    .command('add')
    .description('Subscribe this agent: prints the watch and its signing secret (shown only now)')
    .argument('<target>', "an agent's DID or handle, or a remote entry id")
    .argument('<url>', 'https:// URL the deliveries are POSTed to')
    .option(
      '--events <list>',
      `comma-separated; default: every event of the target's kind (${AGENT_EVENTS.join(', ')} for a DID; ${ENTRY_EVENTS.join(', ')} for an entry)`,
    )
    .action(async (ref: string, url: string, options: { events?: string }, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      const target = await resolveAgent(cli, ref);
      const events =
        options.events === undefined
          ? target.startsWith('did:')
            ? AGENT_EVENTS
            : ENTRY_EVENTS
          : (options.events
              .split(',')
              .map((event) => event.trim())
              .filter((event) => event !== '') as WatchEventType[]);
      const created = await client.watches.create({ target, url, events });
      cli.out.result(created, () => {
        cli.out.fields([
          ['id', created.id],
          ['target', created.target],
          ['url', created.url],
          ['events', created.events.join(', ')],
          ['secret', created.secret],
        ]);
        cli.out.line('keep the secret: it signs every delivery and is not shown again');
      });
    });
  withExamples(
    add,
    'agent-registry watch add did:web:registry.example:agent:0123... https://hooks.example/registry',
    'agent-registry watch add <entry-id> https://hooks.example/tools --events entry.tools_changed --json',
  );

  const list = watch
    .command('list', { isDefault: true })
    .description("This agent's watches, oldest first")
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(async (options: { cursor?: string }, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      const page = await client.watches.list(options.cursor === undefined ? {} : { cursor: options.cursor });
      cli.out.result(page, () => {
        cli.out.table(
          page.watches,
          [
            { header: 'id', value: (item) => item.id },
            { header: 'target', value: (item) => item.target, max: 70 },
            { header: 'url', value: (item) => item.url, max: 60 },
            { header: 'events', value: (item) => item.events.join(',') },
          ],
          'no watches',
        );
        if (page.next_cursor !== null) cli.out.line(`more: --cursor ${page.next_cursor}`);
      });
    });
  withExamples(list, 'agent-registry watch list', 'agent-registry watch list --json');

  const remove = watch
    .command('remove')
    .description('Delete one of your watches: nothing more is delivered for it')
    .argument('<id>')
    .action(async (id: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      await client.watches.remove(id);
      cli.out.result({ id, removed: true }, () => cli.out.line(`removed watch ${id}`));
    });
  withExamples(remove, 'agent-registry watch remove wat_5f0c...');
}
