import path from 'node:path';
import type { RegistryClient } from '@agent-registry/sdk';
import { CliError, EXIT } from '../exit-codes.js';
import type { Command } from 'commander';
import { describeAvailability } from '../availability.js';
import { contextOf, type CliContext } from '../context.js';
import { withExamples } from '../help.js';
import { describeKey, readKey } from '../keys.js';
import { dryRunRegistration } from '../profile/dry-run.js';
import { agentClient } from '../registry.js';
import { isRegistryError } from '../registry-error.js';
import { reportProfileProblems } from './validate.js';
import { CALLER_ONLY } from './init.js';

const when = (epochMs: number | undefined | null): string =>
  epochMs === undefined || epochMs === null ? 'unknown' : new Date(epochMs).toISOString();

/** The profile file, checked; exits 1 listing every problem before anything is signed or sent. */
export async function loadCheckedProfile(
  cli: CliContext,
  file: string | undefined,
  mode: 'register' | 'update',
): Promise<Record<string, unknown>> {
  const target = path.resolve(file ?? cli.home.profilePath);
  const { readProfileFile } = await import('../profile/check.js');
  const read = readProfileFile(target, mode);
  reportProfileProblems(cli, target, read.check.problems, read.check.warnings);
  if (!read.ok) throw new Error('unreachable: problems were reported');
  return read.profile;
}

export function registerRegister(program: Command): void {
  const command = program
    .command('register')
    .description(
      'Register this agent: checks the profile, signs it with key.json (bound to this registry), saves the DID and token',
    )
    .option('--profile <file>', 'profile file (default: profile.json in the config directory)')
    .option('--referrer <code>', 'referral code or referrer DID')
    .option(
      '--dry-run',
      "check the profile and key against this registry's published limits and print what registering would send; registers nothing",
    )
    .action(async (options: { profile?: string; referrer?: string; dryRun?: boolean }, self: Command) => {
      const cli = contextOf(self);
      const profile = await loadCheckedProfile(cli, options.profile, 'register');
      const key = await readKey(cli);
      const { url: registry, source } = cli.registry();
      const { RegistryClient } = await import('@agent-registry/sdk');
      const client = new RegistryClient({ registry, key });
      if (options.dryRun) {
        const report = await dryRunRegistration(client, key, profile as Record<string, unknown>);
        if (report.problems.length > 0)
          throw new CliError(
            `registering at ${registry} would be refused:\n${report.problems.map((problem) => `  ${problem}`).join('\n')}`,
            EXIT.failed,
            'DRY_RUN_REFUSED',
            { ...report },
          );
        cli.out.result({ ...report, valid: true }, () => {
          cli.out.fields([
            ['registry', registry],
            ['audience', report.audience],
            ['key', report.key_type],
            ['profile', `${report.profile_bytes} of ${report.profile_max_bytes} bytes as stored`],
            [
              'proof of work',
              report.proof_of_work_bits === 0 ? 'none asked' : `${report.proof_of_work_bits} bits`,
            ],
          ]);
          cli.out.line();
          cli.out.line(
            `the profile and key pass this registry's limits; nothing was registered (run without --dry-run to register)`,
          );
        });
        return;
      }
      const progress = cli.out.progress(`registering at ${registry}`);
      let session;
      try {
        session = await client.register(
          profile as unknown as Parameters<RegistryClient['register']>[0],
          options.referrer ? { referrer: options.referrer } : {},
        );
      } catch (error) {
        if (isRegistryError(error) && error.code === 'PUBLIC_KEY_EXISTS') {
          const flag = source === 'flag' ? ` --registry ${registry}` : '';
          throw new CliError(
            `this key is already registered at ${registry}: get a token for it with \`agent-registry login${flag}\` (\`agent-registry init --force\` starts a new agent, keeping the old key as .bak)`,
            EXIT.failed,
            'PUBLIC_KEY_EXISTS',
            { status: error.status },
          );
        }
        throw error;
      } finally {
        progress.done();
      }
      cli.saveSession(session);
      // As `init --registry` does: the registry an agent registered at is where its next commands go.
      const remembered = source === 'flag' && cli.readConfig().registry !== registry;
      if (remembered) cli.saveConfig({ ...cli.readConfig(), registry });
      cli.out.result(
        { registry, did: session.did, expires_at: session.expires_at, saved_as_default: remembered },
        () => {
          cli.out.fields([
            ['registered', session.did],
            ['registry', registry],
            ['token expires', when(session.expires_at)],
          ]);
          if (remembered) cli.out.note(`${registry} is now the default registry (config.json)`);
          cli.out.line();
          const { capabilities } = profile;
          const servesNothing =
            Array.isArray(capabilities) &&
            capabilities.every((capability: { type?: unknown }) => capability.type === CALLER_ONLY);
          cli.out.line(
            servesNothing
              ? 'Next: find agents with `agent-registry search`, then `agent-registry invoke <did> <capability>`.'
              : 'Next: serve your capabilities with `agent-registry worker ./handler.mjs`.',
          );
        },
      );
    });
  withExamples(
    command,
    'agent-registry register',
    'agent-registry register --profile ./translator.json --registry https://registry.example',
    'agent-registry register --json | jq -r .did',
  );
}

export function registerLogin(program: Command): void {
  const command = program
    .command('login')
    .description('Get a new token by signing an authentication message with key.json (no password)')
    .action(async (_options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      const session = await client.login();
      cli.saveSession(session);
      cli.out.result({ registry: cli.registry().url, did: session.did, expires_at: session.expires_at }, () =>
        cli.out.fields([
          ['logged in', session.did],
          ['registry', cli.registry().url],
          ['token expires', when(session.expires_at)],
        ]),
      );
    });
  withExamples(command, 'agent-registry login', 'agent-registry login --registry https://registry.example');
}

export function registerToken(program: Command): void {
  const command = program
    .command('token')
    .description(
      'Print a fresh bearer token for this agent (signed with key.json) for MCP clients, A2A clients or curl',
    )
    .action(async (_options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      const session = await client.login();
      cli.saveSession(session);
      // Only the token on stdout, so `$(agent-registry token)` is the token; when it ends goes to stderr.
      cli.out.result(
        {
          registry: cli.registry().url,
          did: session.did,
          token: session.token,
          expires_at: session.expires_at,
        },
        () => {
          cli.out.line(session.token);
          cli.out.note(`token for ${session.did}, expires ${when(session.expires_at)}`);
        },
      );
    });
  withExamples(
    command,
    'agent-registry token',
    'export AGENT_REGISTRY_TOKEN=$(agent-registry token)   # then: -H "Authorization: Bearer $AGENT_REGISTRY_TOKEN"',
    'agent-registry token --json | jq -r .expires_at',
  );
}

export function registerWhoami(program: Command): void {
  const command = program
    .command('whoami')
    .description(
      "Show this agent's DID, key, when its token expires, and its profile status at the registry (`agent-registry token` prints the token)",
    )
    .action(async (_options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client, did, key } = await agentClient(cli);
      const profile = await client.getAgent(did);
      const session = cli.session();
      const described = await describeKey(key);
      const result = {
        registry: cli.registry().url,
        did,
        name: profile.name,
        status: profile.status,
        key_type: described.key_type,
        public_key: described.public_key,
        token_expires_at: session?.expires_at ?? null,
        invocation_enabled: profile.invocation_enabled,
        delivery_mode: profile.delivery_mode,
        availability: profile.availability,
      };
      cli.out.result(result, () =>
        cli.out.fields([
          ['did', did],
          ['name', profile.name],
          ['status', profile.status],
          ['registry', result.registry],
          ['key', `${described.key_type} ${described.public_key}`],
          ['token expires', session ? when(session.expires_at) : '(no token yet: `agent-registry login`)'],
          ['invocation', profile.invocation_enabled ? profile.delivery_mode : 'disabled'],
          ['availability', describeAvailability(profile.availability)],
        ]),
      );
    });
  withExamples(command, 'agent-registry whoami', 'agent-registry whoami --json | jq -r .did');
}
