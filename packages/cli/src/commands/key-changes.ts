import fs from 'node:fs';
import { Option, type Command } from 'commander';
import type { AgentKey } from '@agent-registry/sdk';
import { contextOf, type CliContext } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { KEY_TYPES, makeKey, writeKey, type KeyType } from '../keys.js';
import { agentClient, anonymousClient, resolveAgent } from '../registry.js';

/**
 * `keys rotate` and `keys recovery ...` (docs/identity.md). A rotation first writes the new key and
 * its signed request to `key.json.rotating` (mode 0600), so a rotation interrupted between signing and
 * the answer resumes from it; key.json is replaced only once the registry shows the new key, the old
 * one kept beside it as a .bak file.
 */

interface PendingRotation {
  version: 1;
  registry: string;
  did: string;
  key_type: KeyType;
  chain_id: string | null;
  private_key: string;
  signed: Record<string, unknown>;
}

/** A signed rotation older than this is signed again (the registry takes 5 minutes). */
const RESIGN_AFTER_MS = 4 * 60 * 1000;

const pendingPath = (cli: CliContext): string => `${cli.home.keyPath}.rotating`;

function readPending(file: string): PendingRotation | undefined {
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as PendingRotation;
}

function writePending(file: string, pending: PendingRotation, replace: boolean): void {
  fs.writeFileSync(file, `${JSON.stringify(pending, null, 2)}\n`, {
    mode: 0o600,
    flag: replace ? 'w' : 'wx',
  });
}

async function keyOf(pending: PendingRotation): Promise<AgentKey> {
  const { AgentKey } = await import('@agent-registry/sdk');
  return pending.key_type === 'ed25519'
    ? AgentKey.fromEd25519(pending.private_key)
    : AgentKey.fromSecp256k1(pending.private_key, pending.chain_id ?? 'eip155:1');
}

async function rotate(cli: CliContext, options: { keyType: KeyType }): Promise<void> {
  const { client, did } = await agentClient(cli);
  const file = pendingPath(cli);
  let pending = readPending(file);
  const resumed = pending !== undefined;
  if (pending !== undefined && (pending.did !== did || pending.registry !== client.registry)) {
    throw new UsageError(
      `${file} holds a rotation of ${pending.did} at ${pending.registry}: finish it there, or delete the file to abandon it`,
      'ROTATION_PENDING_ELSEWHERE',
    );
  }
  if (pending === undefined) {
    const next = await makeKey({ keyType: options.keyType });
    pending = {
      version: 1,
      registry: client.registry,
      did,
      key_type: next.keyType,
      chain_id: next.chainId,
      private_key: next.exportPrivateKey(),
      signed: await client.signRotation(next),
    };
    writePending(file, pending, false);
  }
  const next = await keyOf(pending);
  const nextPublic = await next.publicKey();
  let generation: number | null = null;
  if ((await client.getAgent(did)).public_key !== nextPublic) {
    if (Date.now() - Number(pending.signed.timestamp) > RESIGN_AFTER_MS) {
      pending = { ...pending, signed: await client.signRotation(next) };
      writePending(file, pending, true);
    }
    generation = (await client.rotateKey(next, pending.signed)).key_generation;
  } else {
    // The registry took it before the answer was lost: log in with the new key.
    client.key = next;
    await client.login();
  }
  const backup = await writeKey(cli, next, true);
  fs.rmSync(file);
  const result = {
    did,
    key_type: next.keyType,
    public_key: nextPublic,
    key_generation: generation,
    resumed,
    key_backup: backup ?? null,
  };
  cli.out.result(result, () =>
    cli.out.fields([
      ['did', did],
      ['new key', `${next.keyType} ${nextPublic}`],
      ['resumed', resumed ? 'yes (an interrupted rotation)' : undefined],
      ['old key', backup ? `${backup} (retired: it can no longer sign for this agent)` : undefined],
    ]),
  );
}

/** A key file to use, or a new Ed25519 key written there when it does not exist. */
async function keyFile(path: string): Promise<AgentKey> {
  const [{ AgentKey }, { loadKey, saveKey }] = await Promise.all([
    import('@agent-registry/sdk'),
    import('@agent-registry/sdk/node'),
  ]);
  if (fs.existsSync(path)) return loadKey(path);
  const key = AgentKey.generateEd25519();
  await saveKey(path, key);
  return key;
}

/**
 * Installs the key a recovery named once the registry shows it as the agent's key (reading the recovery
 * finishes a due one): key.json, the old file kept as .bak, and a session logged in with it.
 */
async function finishRecovery(cli: CliContext, did: string, newKeyFile: string): Promise<void> {
  const { loadKey } = await import('@agent-registry/sdk/node');
  const { RegistryClient } = await import('@agent-registry/sdk');
  const next = await loadKey(newKeyFile);
  const nextPublic = await next.publicKey();
  const anonymous = await anonymousClient(cli);
  const status = await anonymous.getKeyRecovery(did);
  if ((await anonymous.getAgent(did)).public_key !== nextPublic) {
    throw new UsageError(
      status.pending !== null && status.pending.new_public_key === nextPublic
        ? `the recovery of ${did} finishes at ${new Date(status.pending.completes_at).toISOString()}: run this again then`
        : `${newKeyFile} is not the key of ${did} and no recovery to it is pending (cancelled by the current key, or another key named)`,
      status.pending !== null ? 'RECOVERY_NOT_DUE' : 'RECOVERY_NOT_PENDING',
    );
  }
  const backup = await writeKey(cli, next, true);
  const client = new RegistryClient({
    registry: cli.registry().url,
    key: next,
    did,
    onToken: (session) => cli.saveSession(session),
  });
  await client.login();
  const result = { did, key_type: next.keyType, public_key: nextPublic, key_backup: backup ?? null };
  cli.out.result(result, () =>
    cli.out.fields([
      ['did', did],
      ['key', `${next.keyType} ${nextPublic} (now key.json)`],
      ['old key', backup],
    ]),
  );
}

async function showRecovery(
  cli: CliContext,
  status: {
    recovery_key_set: boolean;
    recovery_public_key: string | null;
    timelock_hours: number;
    pending: { new_public_key: string; completes_at: number } | null;
  },
): Promise<void> {
  cli.out.result(status, () =>
    cli.out.fields([
      ['recovery key', status.recovery_public_key ?? '(none: a lost key stays lost)'],
      ['timelock', `${status.timelock_hours} h`],
      [
        'pending',
        status.pending
          ? `${status.pending.new_public_key} at ${new Date(status.pending.completes_at).toISOString()}`
          : 'none',
      ],
    ]),
  );
}

export function registerKeyChanges(keys: Command): void {
  const rotateCommand = keys
    .command('rotate')
    .description(
      "Replace this agent's key, keeping its DID and reputation (did:web agents); resumes an interrupted rotation",
    )
    .addOption(new Option('--key-type <type>', 'type of the new key').choices(KEY_TYPES).default('ed25519'))
    .action(async (options: { keyType: KeyType }, self: Command) => rotate(contextOf(self), options));
  withExamples(
    rotateCommand,
    'agent-registry keys rotate',
    'agent-registry keys rotate --key-type secp256k1',
  );

  const recovery = keys
    .command('recovery')
    .description('Recovery key of this agent: show, set, start a recovery, cancel one');
  recovery
    .command('show', { isDefault: true })
    .description('The recovery key and any pending recovery')
    .argument('[did]', 'the agent (default: this agent)')
    .action(async (did: string | undefined, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const target = did === undefined ? (await agentClient(cli)).did : await resolveAgent(cli, did);
      await showRecovery(cli, await (await anonymousClient(cli)).getKeyRecovery(target));
    });
  recovery
    .command('set')
    .description('Set or replace the recovery key (signed by the current key); the file is created if absent')
    .argument('<key-file>', 'the recovery key file; keep it apart (offline)')
    .action(async (path: string, _options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      await showRecovery(cli, await client.setRecoveryKey(await keyFile(path)));
    });
  recovery
    .command('start')
    .description('Start a recovery, signed by the recovery key: the new key takes over after the timelock')
    .argument('<did>', 'the agent to recover')
    .requiredOption('--recovery-key <file>', 'the recovery key file')
    .requiredOption('--new-key <file>', 'the new key file (created if absent); use it as key.json once done')
    .action(async (ref: string, options: { recoveryKey: string; newKey: string }, self: Command) => {
      const cli = contextOf(self);
      const { loadKey } = await import('@agent-registry/sdk/node');
      const did = await resolveAgent(cli, ref);
      const recoveryKey = await loadKey(options.recoveryKey);
      const next = await keyFile(options.newKey);
      await showRecovery(cli, await (await anonymousClient(cli)).startRecovery(recoveryKey, next, did));
      cli.out.note(
        `when the timelock ends: agent-registry keys recovery finish ${did} --new-key ${options.newKey}`,
      );
    });
  const finishCommand = recovery
    .command('finish')
    .description(
      "Once the timelock has ended, make the new key this agent's key here: key.json (the old one kept as .bak) and a session",
    )
    .argument('<did>', 'the agent being recovered')
    .requiredOption('--new-key <file>', 'the new key file named by `keys recovery start`')
    .action(async (did: string, options: { newKey: string }, self: Command) =>
      finishRecovery(contextOf(self), did, options.newKey),
    );
  withExamples(
    finishCommand,
    'agent-registry keys recovery finish did:web:registry.example:agent:0123... --new-key new.json',
  );
  recovery
    .command('cancel')
    .description('Cancel a pending recovery (signed by the current key)')
    .action(async (_options: unknown, self: Command) => {
      const cli = contextOf(self);
      const { client } = await agentClient(cli);
      await showRecovery(cli, await client.cancelRecovery());
    });
}
