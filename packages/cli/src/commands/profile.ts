import readline from 'node:readline/promises';
import type { RegistryClient } from '@agent-registry/sdk';
import { Option, type Command } from 'commander';
import { describeAvailability } from '../availability.js';
import { contextOf, type CliContext } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { agentClient, anonymousClient, isHandle } from '../registry.js';
import { isRemoteEntryId, printRemoteEntry } from '../remote-entry.js';
import { neutralScoreHint } from '../reputation-hint.js';
import { loadCheckedProfile } from './identity.js';

type AgentProfile = Awaited<ReturnType<RegistryClient['getAgent']>>;

/** The human view of a profile: fields, then its capabilities as a table. */
export function printProfile(cli: CliContext, profile: AgentProfile, why?: string): void {
  cli.out.fields([
    ['did', profile.did],
    ['name', profile.name],
    ['description', profile.description ?? null],
    ['status', profile.status],
    ['key', `${profile.key_type} ${profile.public_key}`],
    ['tags', profile.tags.length > 0 ? profile.tags.join(', ') : null],
    ['website', profile.website ?? undefined],
    ['invocation', profile.invocation_enabled ? profile.delivery_mode : 'disabled'],
    ['availability', describeAvailability(profile.availability)],
    [
      'reputation',
      profile.total_reviews === 0
        ? 'unrated (no reviews yet)'
        : `${profile.reputation_score} (average ${profile.average_rating}, ${profile.total_reviews} ${profile.total_reviews === 1 ? 'review' : 'reviews'})`,
    ],
    ['why', why],
    ['created', new Date(profile.created_at).toISOString()],
  ]);
  cli.out.line();
  cli.out.table(profile.capabilities, [
    { header: 'capability', value: (capability) => capability.type },
    { header: 'description', value: (capability) => capability.description ?? '' },
    {
      header: 'schemas',
      value: (capability) =>
        [capability.input_schema ? 'input' : '', capability.output_schema ? 'output' : '']
          .filter(Boolean)
          .join(', '),
    },
  ]);
}

export function registerShow(program: Command): void {
  const command = program
    .command('show')
    .description("Show an agent's public profile, or a remote entry that `search --federated` listed")
    .argument(
      '<did>',
      'the agent, e.g. did:web:registry.example:agent:0123..., its handle (com.example/translator), or a remote entry id (a2a:..., mcp:..., peer:...)',
    )
    .action(async (did: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const client = await anonymousClient(cli);
      if (isRemoteEntryId(did)) {
        const entry = await client.getRemoteEntry(did);
        cli.out.result(entry, () => printRemoteEntry(cli, entry));
        return;
      }
      const profile = isHandle(did) ? await client.getAgentByHandle(did) : await client.getAgent(did);
      const why = cli.out.json ? undefined : await neutralScoreHint(client, profile);
      cli.out.result(profile, () => printProfile(cli, profile, why));
    });
  withExamples(
    command,
    'agent-registry show did:web:localhost%3A8080:agent:4f6c0e0c9a3b4d5e8f7a6b5c4d3e2f1a',
    'agent-registry show did:pkh:eip155:1:0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B --json',
    "agent-registry show 'a2a:https://cards.example/.well-known/agent-card.json'",
    'agent-registry show com.example/translator',
  );
}

interface UpdateOptions {
  profile?: string;
  delivery?: 'none' | 'webhook' | 'queue';
  webhookUrl?: string;
  webhookSecret?: string;
  disable?: boolean;
  probes?: 'on' | 'off';
}

export function registerUpdate(program: Command): void {
  const command = program
    .command('update')
    .description(
      'Publish profile.json again (PUT, only the members present), and/or change how invocations reach this agent',
    )
    .option('--profile <file>', 'profile file (default: profile.json in the config directory)')
    .addOption(
      new Option('--delivery <mode>', 'enable invocations, delivered by: queue, webhook or none').choices([
        'none',
        'webhook',
        'queue',
      ]),
    )
    .option('--webhook-url <url>', 'where webhook deliveries go (with --delivery webhook)')
    .option('--webhook-secret <secret>', 'your webhook secret (the registry generates one when omitted)')
    .option('--disable', 'stop accepting invocations')
    .addOption(
      new Option(
        '--probes <on|off>',
        "whether the registry probes your webhook for availability (off: your availability is 'unknown')",
      ).choices(['on', 'off']),
    )
    .action(async (options: UpdateOptions, self: Command) => {
      const cli = contextOf(self);
      const invocationChange =
        options.delivery !== undefined || options.disable === true || options.probes !== undefined;
      if ((options.webhookUrl || options.webhookSecret) && options.delivery !== 'webhook') {
        throw new UsageError(
          '--webhook-url and --webhook-secret go with --delivery webhook',
          'WEBHOOK_WITHOUT_MODE',
        );
      }
      if (options.disable && options.delivery) {
        throw new UsageError('use either --disable or --delivery, not both', 'CONFLICTING_OPTIONS');
      }
      const profileChange = !invocationChange || options.profile !== undefined;
      const patch = profileChange ? await loadCheckedProfile(cli, options.profile, 'update') : undefined;
      const { client, did } = await agentClient(cli);

      const result: { profile?: AgentProfile; invocation?: Record<string, unknown> } = {};
      if (patch) {
        result.profile = await client.updateAgent(patch as Parameters<RegistryClient['updateAgent']>[0], did);
      }
      if (invocationChange) {
        const current = await client.getInvocation(did);
        result.invocation = (await client.setInvocation(
          {
            // --probes alone changes nothing else: invocations stay enabled or disabled as they are.
            enabled:
              options.disable !== true &&
              (options.delivery !== undefined || options.probes === undefined || current.enabled),
            delivery_mode: options.delivery ?? current.delivery_mode,
            ...(options.webhookUrl ? { webhook_url: options.webhookUrl } : {}),
            ...(options.webhookSecret ? { webhook_secret: options.webhookSecret } : {}),
            ...(options.probes ? { probes: options.probes === 'on' } : {}),
          },
          did,
        )) as Record<string, unknown>;
      }
      cli.out.result(result, () => {
        if (result.profile) printProfile(cli, result.profile);
        if (result.invocation) {
          if (result.profile) cli.out.line();
          const invocation = result.invocation;
          cli.out.fields([
            ['invocation', invocation.enabled ? String(invocation.delivery_mode) : 'disabled'],
            ['webhook url', (invocation.webhook_url as string | null | undefined) ?? undefined],
            [
              'probes',
              typeof invocation.probes === 'boolean' ? (invocation.probes ? 'on' : 'off') : undefined,
            ],
          ]);
          if (typeof invocation.webhook_secret === 'string') {
            cli.out.line();
            cli.out.line(`webhook secret (shown once, store it): ${invocation.webhook_secret}`);
          }
        }
      });
    });
  withExamples(
    command,
    'agent-registry update                                  # publish profile.json again',
    'agent-registry update --delivery queue                 # receive invocations with `agent-registry worker`',
    'agent-registry update --delivery webhook --webhook-url https://agent.example/invoke',
    'agent-registry update --disable',
  );
}

async function confirm(question: string): Promise<boolean> {
  const prompt = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

export function registerDeactivate(program: Command): void {
  const command = program
    .command('deactivate')
    .description('Deactivate this agent (soft delete: it disappears from search and cannot be invoked)')
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)')
    .action(async (options: { yes?: boolean }, self: Command) => {
      const cli = contextOf(self);
      const { client, did } = await agentClient(cli);
      if (!options.yes) {
        if (!process.stdin.isTTY || cli.out.json) {
          throw new UsageError(
            `deactivating ${did} cannot be undone: add --yes to confirm`,
            'CONFIRMATION_REQUIRED',
          );
        }
        if (!(await confirm(`Deactivate ${did}? This cannot be undone. [y/N] `))) {
          throw new UsageError('cancelled', 'CANCELLED');
        }
      }
      const result = await client.deactivate(did);
      cli.out.result(result, () =>
        cli.out.fields([
          ['deactivated', did],
          ['at', new Date(result.deactivated_at).toISOString()],
        ]),
      );
    });
  withExamples(command, 'agent-registry deactivate', 'agent-registry deactivate --yes --json');
}
