import type { Command } from 'commander';
import type { AgentDomains } from '@agent-registry/sdk';
import { contextOf, type CliContext } from '../context.js';
import { withExamples } from '../help.js';
import { agentClient, anonymousClient, targetDid } from '../registry.js';

/** `domain claim|check|list|drop` and `handle set|clear` (docs/identity.md, "Domains and handles"). */

function showDomains(cli: CliContext, state: AgentDomains): void {
  cli.out.result(state, () =>
    cli.out.fields([
      ['did', state.did],
      [
        'domains',
        state.domains.length === 0
          ? '(none)'
          : state.domains
              .map(
                (claim) =>
                  `${claim.domain} (${claim.method}, checked ${new Date(claim.checked_at).toISOString()})`,
              )
              .join(', '),
      ],
      ['handle', state.handle ?? '(none)'],
    ]),
  );
}

export function registerDomains(program: Command): void {
  const domain = program
    .command('domain')
    .description(
      'Prove this agent holds a domain: publish its DID at https://<domain>/.well-known/agent-registry.json ({"agents":["did:..."]}) or in a TXT record _agent-registry.<domain> "did=<DID>", then claim it',
    );
  const claim = domain
    .command('claim')
    .description('Ask the registry to check the proof now and record the domain')
    .argument('<domain>', 'a host name, e.g. example.com')
    .action(async (name: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      showDomains(cli, await client.claimDomain(name));
    });
  withExamples(claim, 'agent-registry domain claim example.com');
  domain
    .command('check')
    .description('Check a domain this agent holds again now (as claim does)')
    .argument('<domain>', 'a verified domain of this agent')
    .action(async (name: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      showDomains(cli, await client.claimDomain(name));
    });
  domain
    .command('list', { isDefault: true })
    .description("An agent's verified domains and handle")
    .argument('[did]', 'the agent: its DID or handle (default: this agent)')
    .action(async (did: string | undefined, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      showDomains(cli, await (await anonymousClient(cli)).listDomains(await targetDid(cli, did)));
    });
  domain
    .command('drop')
    .description('Drop a domain claim (and the handle under it)')
    .argument('<domain>', 'a verified domain of this agent')
    .action(async (name: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      showDomains(cli, await client.dropDomain(name));
    });

  const handle = program
    .command('handle')
    .description('A readable name under a verified domain, e.g. com.example/translator');
  const set = handle
    .command('set')
    .description("Take a handle: a verified domain's labels reversed, '/', a name")
    .argument('<handle>', 'e.g. com.example/translator for example.com')
    .action(async (name: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      showDomains(cli, await client.setHandle(name));
    });
  withExamples(set, 'agent-registry handle set com.example/translator');
  handle
    .command('clear')
    .description("Give up this agent's handle")
    .action(async (_options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      showDomains(cli, await client.clearHandle());
    });
}
