import fs from 'node:fs';
import { Option, type Command } from 'commander';
import { contextOf } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { describeKey, KEY_TYPES, makeKey, readKey, writeKey, type KeyType } from '../keys.js';
import { reportProfileProblems } from './validate.js';

interface InitOptions {
  name: string;
  description?: string;
  capability: string[];
  tags?: string;
  website?: string;
  keyType: KeyType;
  chain?: string;
  privateKey?: string;
  force?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * The capability type of an agent that only calls others. The interface wants at least one capability
 * in every profile; this one says what the agent is, and `worker` refuses to serve it.
 */
export const CALLER_ONLY = 'caller';

/** `type` or `type:description` of the --capability option. */
function parseCapability(spec: string): { type: string; description?: string } {
  const colon = spec.indexOf(':');
  if (colon === -1) return { type: spec.trim() };
  const description = spec.slice(colon + 1).trim();
  return { type: spec.slice(0, colon).trim(), ...(description ? { description } : {}) };
}

export function registerInit(program: Command): void {
  const command = program
    .command('init')
    .description('Create a key (key.json, mode 0600) and a profile (profile.json) in the config directory')
    .option('--name <name>', 'agent name (1-100 characters)', 'My agent')
    .option('--description <text>', 'what the agent does')
    .option(
      '--capability <type[:description]>',
      `a capability the agent offers (repeatable; without it the agent only calls others: its profile lists "${CALLER_ONLY}" and nothing can invoke it)`,
      collect,
    )
    .option('--tags <list>', 'comma-separated tags, e.g. fr,en')
    .option('--website <url>', 'http(s) URL about the agent')
    .addOption(
      new Option('--key-type <type>', 'ed25519 (did:web) or secp256k1 (did:pkh)')
        .choices(KEY_TYPES)
        .default('ed25519'),
    )
    .option('--chain <chain>', 'chain of a secp256k1 key, e.g. eip155:1 (default eip155:1)')
    .option('--private-key <hex>', 'use this private key instead of generating one')
    .option('--force', 'replace an existing key (kept as a .bak file) and profile')
    .action(async (options: InitOptions, self: Command) => {
      const cli = contextOf(self);
      const profileExists = fs.existsSync(cli.home.profilePath);
      const keyExists = fs.existsSync(cli.home.keyPath);
      if (profileExists && keyExists && !options.force) {
        throw new UsageError(
          `already initialised: ${cli.home.keyPath} and ${cli.home.profilePath} exist. Edit the profile and run \`agent-registry register\`, or use --force to start over.`,
          'ALREADY_INITIALISED',
        );
      }
      if (options.chain && options.keyType !== 'secp256k1') {
        throw new UsageError('--chain applies to --key-type secp256k1 only', 'CHAIN_WITHOUT_SECP256K1');
      }

      let wroteProfile = false;
      if (!profileExists || options.force) {
        const capabilities = (
          options.capability ?? [`${CALLER_ONLY}:Calls other agents; offers nothing to invoke`]
        ).map(parseCapability);
        const tags = options.tags
          ?.split(',')
          .map((tag) => tag.trim())
          .filter(Boolean);
        const profile = {
          name: options.name,
          description: options.description ?? `${options.name}, an agent on the Agent Registry`,
          capabilities,
          ...(tags && tags.length > 0 ? { tags } : {}),
          ...(options.website ? { website: options.website } : {}),
        };
        const { checkProfileFully } = await import('../profile/check.js');
        const check = checkProfileFully(profile);
        reportProfileProblems(cli, 'the profile from these options', check.problems, check.warnings);
        cli.home.ensureDir();
        cli.home.writePrivate(cli.home.profilePath, `${JSON.stringify(profile, null, 2)}\n`);
        wroteProfile = true;
      }

      let backup: string | undefined;
      let wroteKey = false;
      if (!keyExists || options.force) {
        const key = await makeKey({
          keyType: options.keyType,
          ...(options.chain ? { chain: options.chain } : {}),
          ...(options.privateKey ? { privateKey: options.privateKey } : {}),
        });
        backup = await writeKey(cli, key, options.force === true);
        wroteKey = true;
      }

      const registry = cli.registry();
      if (registry.source === 'flag') cli.saveConfig({ ...cli.readConfig(), registry: registry.url });

      const key = await describeKey(await readKey(cli));
      const result = {
        home: cli.home.dir,
        profile: cli.home.profilePath,
        profile_written: wroteProfile,
        key: cli.home.keyPath,
        key_written: wroteKey,
        key_backup: backup ?? null,
        registry: registry.url,
        ...key,
      };
      cli.out.result(result, () => {
        cli.out.fields([
          ['profile', `${cli.home.profilePath}${wroteProfile ? '' : ' (kept)'}`],
          ['key', `${cli.home.keyPath}${wroteKey ? ' (mode 0600)' : ' (kept)'}`],
          ['old key', backup],
          ['key type', key.key_type],
          ['public key', key.public_key],
          ['did', key.did ?? '(assigned by the registry at registration)'],
          ['registry', registry.url],
        ]);
        if (wroteProfile && options.capability === undefined) {
          cli.out.line(
            `capabilities: none to serve (the profile lists "${CALLER_ONLY}"); add some with --capability <type> or in profile.json`,
          );
        }
        cli.out.line();
        cli.out.line('Next: edit the profile if you like, then `agent-registry register`.');
      });
    });
  withExamples(
    command,
    'agent-registry init --name "Translator" --capability "translation:English to French" --tags fr,en',
    'agent-registry init --key-type secp256k1 --chain eip155:8453',
    'AGENT_REGISTRY_HOME=./agent-b agent-registry init --name "Second agent"',
    'agent-registry --registry https://registry.example init   # also saves the registry as default',
  );
}
