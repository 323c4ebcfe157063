import fs from 'node:fs';
import { Option, type Command } from 'commander';
import { contextOf, type CliContext } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { describeKey, KEY_TYPES, makeKey, readKey, writeKey, type KeyType } from '../keys.js';
import { registerKeyChanges } from './key-changes.js';

async function showKey(cli: CliContext, extra: Record<string, unknown> = {}): Promise<void> {
  const described = await describeKey(await readKey(cli));
  const mode = (fs.statSync(cli.home.keyPath).mode & 0o777).toString(8).padStart(4, '0');
  const did = cli.session()?.did ?? described.did;
  const result = { file: cli.home.keyPath, mode, ...described, did, ...extra };
  cli.out.result(result, () =>
    cli.out.fields([
      ['file', `${cli.home.keyPath} (mode ${mode})`],
      ['key type', described.key_type],
      ['public key', described.public_key],
      ['chain', described.chain_id ?? undefined],
      ['address', described.address ?? undefined],
      ['did', did ?? `(not registered at ${cli.registry().url})`],
      ['old key', (extra.key_backup as string | undefined) ?? undefined],
    ]),
  );
}

interface NewKeyOptions {
  keyType: KeyType;
  chain?: string;
  force?: boolean;
}

const keyTypeOption = () =>
  new Option('--key-type <type>', 'ed25519 (did:web) or secp256k1 (did:pkh)')
    .choices(KEY_TYPES)
    .default('ed25519');

export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description("This agent's key: show it, generate a new one, or import one");

  const show = keys
    .command('show', { isDefault: true })
    .description('Show the key type, public key, address and DID (never the private key)')
    .action(async (_options: unknown, self: Command) => showKey(contextOf(self)));
  withExamples(show, 'agent-registry keys', 'agent-registry keys show --json');

  const generate = keys
    .command('generate')
    .description(
      'Generate a new key into key.json (mode 0600); an existing key needs --force and is kept as .bak',
    )
    .addOption(keyTypeOption())
    .option('--chain <chain>', 'chain of a secp256k1 key (default eip155:1)')
    .option('--force', 'replace an existing key')
    .action(async (options: NewKeyOptions, self: Command) => {
      const cli = contextOf(self);
      const key = await makeKey({
        keyType: options.keyType,
        ...(options.chain ? { chain: options.chain } : {}),
      });
      const backup = await writeKey(cli, key, options.force === true);
      await showKey(cli, { key_backup: backup ?? null });
    });
  withExamples(
    generate,
    'agent-registry keys generate',
    'agent-registry keys generate --key-type secp256k1 --chain eip155:137',
  );

  const importKey = keys
    .command('import')
    .description("Use an existing private key (hex, or @file holding it) as this agent's key")
    .argument('<private-key>', 'hex private key (0x optional), or @file')
    .addOption(keyTypeOption())
    .option('--chain <chain>', 'chain of a secp256k1 key (default eip155:1)')
    .option('--force', 'replace an existing key')
    .action(async (privateKey: string, options: NewKeyOptions, self: Command) => {
      const cli = contextOf(self);
      let hex = privateKey;
      if (privateKey.startsWith('@')) {
        try {
          hex = fs.readFileSync(privateKey.slice(1), 'utf8').trim();
        } catch (error) {
          throw new UsageError(
            `cannot read ${privateKey.slice(1)}: ${(error as Error).message}`,
            'FILE_UNREADABLE',
          );
        }
      }
      const key = await makeKey({
        keyType: options.keyType,
        privateKey: hex,
        ...(options.chain ? { chain: options.chain } : {}),
      });
      const backup = await writeKey(cli, key, options.force === true);
      await showKey(cli, { key_backup: backup ?? null });
    });
  withExamples(
    importKey,
    'agent-registry keys import @wallet.hex --key-type secp256k1 --chain eip155:8453',
    'agent-registry keys import 9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
  );
  registerKeyChanges(keys);
  withExamples(keys, 'agent-registry keys', 'agent-registry keys generate --force');
}
