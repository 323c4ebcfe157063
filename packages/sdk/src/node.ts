import { constants, existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentKey } from './keys.js';

/** The key file: JSON, mode 0600. */
export interface KeyFile {
  version: 1;
  key_type: 'ed25519' | 'secp256k1';
  private_key: string;
  public_key: string;
  chain_id: string | null;
  /** The agent's DID once registered (an Ed25519 agent learns it from the registry). */
  did: string | null;
  /** The registry the DID belongs to. */
  registry: string | null;
}

/** `~` and `~/...` to the home directory; other paths resolved from the working directory. */
export function expandHome(file: string): string {
  if (file === '~') return os.homedir();
  if (file.startsWith('~/')) return path.join(os.homedir(), file.slice(2));
  return path.resolve(file);
}

/** saveKey found a key where it was asked to write one, and was not told to replace it. */
export class KeyFileExistsError extends Error {
  readonly code = 'KEY_EXISTS';
  constructor(readonly file: string) {
    super(
      `${file} already holds a key: it is an agent's identity and cannot be recovered once overwritten. ` +
        'Save the new key to another file, or pass { overwrite: true } to replace it (the old file is kept as .bak).',
    );
    this.name = 'KeyFileExistsError';
  }
}

export interface SaveKeyOptions {
  did?: string | null;
  registry?: string | null;
  /** Replace an existing file; the old one is first copied beside it as `<file>.<epoch ms>.bak` (mode 0600). */
  overwrite?: boolean;
}

/**
 * Writes the key (and what to remember with it) with mode 0600, in a directory of mode 0700. Refuses
 * (KeyFileExistsError) to replace an existing file unless `overwrite` is set: losing a key loses the agent.
 */
export async function saveKey(file: string, key: AgentKey, options: SaveKeyOptions = {}): Promise<string> {
  const target = expandHome(file);
  await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const content: KeyFile = {
    version: 1,
    key_type: key.keyType,
    private_key: key.exportPrivateKey(),
    public_key: await key.publicKey(),
    chain_id: key.chainId,
    did: options.did ?? (await key.did()),
    registry: options.registry ?? null,
  };
  const text = `${JSON.stringify(content, null, 2)}\n`;
  if (options.overwrite === true) {
    await backUpKeyFile(target);
    await writeFile(target, text, { mode: 0o600 });
  } else {
    // 'wx' creates the file or fails if it exists, in one step: no window to lose a key in.
    try {
      await writeFile(target, text, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyFileExistsError(target);
      throw error;
    }
  }
  // writeFile keeps the mode of an existing file: make sure it is private anyway.
  await chmod(target, 0o600);
  return target;
}

/**
 * Copies an existing key file beside itself as `<file>.<epoch ms>.bak` (mode 0600, never over another
 * file) before it is replaced, and answers the copy's path; undefined when there is no file.
 */
export async function backUpKeyFile(file: string): Promise<string | undefined> {
  const target = expandHome(file);
  if (!existsSync(target)) return undefined;
  const backup = `${target}.${Date.now()}.bak`;
  await copyFile(target, backup, constants.COPYFILE_EXCL);
  await chmod(backup, 0o600);
  return backup;
}

/** Reads a key file, refusing one that group or others can read. */
export async function readKeyFile(file: string): Promise<KeyFile> {
  const target = expandHome(file);
  const info = await stat(target);
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
    throw new Error(
      `${target} is readable by other users (mode ${(info.mode & 0o777).toString(8)}); run: chmod 600 ${target}`,
    );
  }
  const parsed = JSON.parse(await readFile(target, 'utf8')) as Partial<KeyFile>;
  if (parsed.version !== 1 || (parsed.key_type !== 'ed25519' && parsed.key_type !== 'secp256k1')) {
    throw new Error(
      `${target} is not an agent key file (expected version 1 and key_type ed25519 or secp256k1)`,
    );
  }
  if (typeof parsed.private_key !== 'string') throw new Error(`${target} has no private_key`);
  if (parsed.key_type === 'secp256k1' && typeof parsed.chain_id !== 'string') {
    throw new Error(`${target}: a secp256k1 key file needs chain_id (e.g. "eip155:1")`);
  }
  return {
    version: 1,
    key_type: parsed.key_type,
    private_key: parsed.private_key,
    public_key: parsed.public_key ?? '',
    chain_id: parsed.chain_id ?? null,
    did: parsed.did ?? null,
    registry: parsed.registry ?? null,
  };
}

/** Loads a key file written by saveKey (checking its public key matches its private key). */
export async function loadKey(file: string): Promise<AgentKey> {
  const content = await readKeyFile(file);
  const key =
    content.key_type === 'ed25519'
      ? AgentKey.fromEd25519(content.private_key)
      : AgentKey.fromSecp256k1(content.private_key, content.chain_id as string);
  if (content.public_key !== '' && content.public_key.toLowerCase() !== (await key.publicKey())) {
    throw new Error(`${expandHome(file)}: public_key does not belong to private_key; the file is damaged`);
  }
  return key;
}

export { AgentKey };
