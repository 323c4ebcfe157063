import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { AgentKey } from '@agent-registry/sdk';
import type { CliContext } from './context.js';
import { AuthRequiredError, UsageError } from './exit-codes.js';

export type KeyType = 'ed25519' | 'secp256k1';
export const KEY_TYPES: readonly KeyType[] = ['ed25519', 'secp256k1'];
export const DEFAULT_CHAIN = 'eip155:1';

export interface KeyChoice {
  keyType: KeyType;
  chain?: string;
  /** Hex private key to import; a new random key when absent. */
  privateKey?: string;
}

/** A new or imported key; a malformed private key is a usage error naming the option. */
export async function makeKey(choice: KeyChoice): Promise<AgentKey> {
  const { AgentKey } = await import('@agent-registry/sdk');
  const chain = choice.chain ?? DEFAULT_CHAIN;
  if (!/^eip155:[1-9][0-9]*$/.test(chain)) {
    throw new UsageError(
      `--chain must look like eip155:<chain number>, e.g. ${DEFAULT_CHAIN}`,
      'INVALID_CHAIN',
    );
  }
  try {
    if (choice.keyType === 'ed25519') {
      return choice.privateKey === undefined
        ? AgentKey.generateEd25519()
        : AgentKey.fromEd25519(choice.privateKey.replace(/^0x/, ''));
    }
    return AgentKey.fromSecp256k1(choice.privateKey ?? `0x${randomBytes(32).toString('hex')}`, chain);
  } catch (error) {
    throw new UsageError(
      `not a valid ${choice.keyType} private key: ${(error as Error).message}`,
      'INVALID_PRIVATE_KEY',
    );
  }
}

/**
 * Writes key.json (mode 0600). An existing key is never overwritten silently: without `force` it is a
 * usage error, with it the old file is kept beside as `key.json.<timestamp>.bak` (losing a key loses the agent).
 */
export async function writeKey(cli: CliContext, key: AgentKey, force: boolean): Promise<string | undefined> {
  let backup: string | undefined;
  if (fs.existsSync(cli.home.keyPath)) {
    if (!force) {
      throw new UsageError(
        `a key already exists at ${cli.home.keyPath}; it is your agent's identity. Use --force to replace it (the old one is kept as a .bak file).`,
        'KEY_EXISTS',
      );
    }
    const { backUpKeyFile } = await import('@agent-registry/sdk/node');
    backup = await backUpKeyFile(cli.home.keyPath);
    fs.rmSync(cli.home.keyPath);
  }
  cli.home.ensureDir();
  const { saveKey } = await import('@agent-registry/sdk/node');
  await saveKey(cli.home.keyPath, key);
  return backup;
}

/** The agent's key from key.json, or exit 4 saying how to get one. */
export async function readKey(cli: CliContext): Promise<AgentKey> {
  if (!fs.existsSync(cli.home.keyPath)) {
    throw new AuthRequiredError(
      `no key at ${cli.home.keyPath}: create one with \`agent-registry init\` (or \`agent-registry keys import\`)`,
      'NO_KEY',
    );
  }
  try {
    const { loadKey } = await import('@agent-registry/sdk/node');
    return await loadKey(cli.home.keyPath);
  } catch (error) {
    throw new UsageError(`cannot use ${cli.home.keyPath}: ${(error as Error).message}`, 'INVALID_KEY_FILE');
  }
}

/** What the CLI shows about a key (never the private part). */
export async function describeKey(key: AgentKey): Promise<{
  key_type: string;
  public_key: string;
  chain_id: string | null;
  address: string | null;
  did: string | null;
}> {
  return {
    key_type: key.keyType,
    public_key: await key.publicKey(),
    chain_id: key.chainId,
    address: await key.address(),
    did: await key.did(),
  };
}
