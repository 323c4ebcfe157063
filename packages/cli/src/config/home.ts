import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../exit-codes.js';

/**
 * Where the CLI keeps its files: `$AGENT_REGISTRY_HOME`, else `$XDG_CONFIG_HOME/agent-registry`,
 * else `~/.config/agent-registry`.
 */
export function resolveHome(env: NodeJS.ProcessEnv): string {
  if (env.AGENT_REGISTRY_HOME) return path.resolve(env.AGENT_REGISTRY_HOME);
  const configBase = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.resolve(configBase, 'agent-registry');
}

/** The files of one config directory. */
export class ConfigHome {
  constructor(readonly dir: string) {}

  get profilePath(): string {
    return path.join(this.dir, 'profile.json');
  }
  get keyPath(): string {
    return path.join(this.dir, 'key.json');
  }
  get configPath(): string {
    return path.join(this.dir, 'config.json');
  }

  /** Creates the directory, readable by its owner only. */
  ensureDir(): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Writes through a temporary file and a rename, so a crash never leaves half a file; mode 0600. */
  writePrivate(file: string, contents: string): void {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, contents, { mode: 0o600 });
    fs.chmodSync(temporary, 0o600);
    fs.renameSync(temporary, file);
  }
}

/** The parsed JSON of a file, or a usage error saying which file is missing or malformed. */
export function readJsonFile(file: string, what: string, hint: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new UsageError(`${what} not found at ${file}. ${hint}`, 'FILE_NOT_FOUND', { file });
    }
    throw new UsageError(`cannot read ${what} at ${file}: ${(error as Error).message}`, 'FILE_UNREADABLE', {
      file,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `${what} at ${file} is not valid JSON: ${(error as Error).message}`,
      'INVALID_JSON',
      { file },
    );
  }
}

/** True when group or others may read the file (POSIX only; Windows has no such bits). */
export function isReadableByOthers(file: string): boolean {
  if (process.platform === 'win32') return false;
  try {
    return (fs.statSync(file).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
