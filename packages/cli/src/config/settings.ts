import fs from 'node:fs';
import { UsageError } from '../exit-codes.js';
import { readJsonFile, type ConfigHome } from './home.js';

export const DEFAULT_REGISTRY = 'http://localhost:8080';

/** What `agent-registry register` or `login` obtained from one registry. */
export interface Session {
  did: string;
  token: string;
  /** Epoch milliseconds. */
  expires_at?: number;
}

/** config.json: the default registry and one session per registry the agent joined. */
export interface ConfigFile {
  registry?: string;
  sessions: Record<string, Session>;
}

/** Keys `agent-registry config set` accepts. */
export const CONFIG_KEYS = ['registry'] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/** A registry base URL without a trailing slash; refuses anything but an absolute http(s) URL. */
export function normaliseRegistryUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `${source} "${value}" is not a URL; expected e.g. ${DEFAULT_REGISTRY}`,
      'INVALID_REGISTRY_URL',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `${source} must be an http:// or https:// URL, not "${value}"`,
      'INVALID_REGISTRY_URL',
    );
  }
  if (url.search || url.hash) {
    throw new UsageError(`${source} must not carry a query or fragment: "${value}"`, 'INVALID_REGISTRY_URL');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function readConfig(home: ConfigHome): ConfigFile {
  if (!fs.existsSync(home.configPath)) return { sessions: {} };
  const raw = readJsonFile(home.configPath, 'the config file', 'Fix or delete it.');
  if (!isRecord(raw)) throw new UsageError(`${home.configPath} must hold a JSON object`, 'INVALID_CONFIG');
  const sessions: Record<string, Session> = {};
  if (isRecord(raw.sessions)) {
    for (const [registry, session] of Object.entries(raw.sessions)) {
      if (isRecord(session) && typeof session.did === 'string' && typeof session.token === 'string') {
        sessions[registry] = {
          did: session.did,
          token: session.token,
          ...(typeof session.expires_at === 'number' ? { expires_at: session.expires_at } : {}),
        };
      }
    }
  }
  return { ...(typeof raw.registry === 'string' ? { registry: raw.registry } : {}), sessions };
}

export function writeConfig(home: ConfigHome, config: ConfigFile): void {
  home.writePrivate(home.configPath, `${JSON.stringify(config, null, 2)}\n`);
}

export type RegistrySource = 'flag' | 'env' | 'config' | 'default';

/** `--registry`, then `AGENT_REGISTRY_URL`, then config.json, then the local default. */
export function resolveRegistry(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  config: ConfigFile,
): { url: string; source: RegistrySource } {
  if (flag) return { url: normaliseRegistryUrl(flag, '--registry'), source: 'flag' };
  if (env.AGENT_REGISTRY_URL) {
    return { url: normaliseRegistryUrl(env.AGENT_REGISTRY_URL, 'AGENT_REGISTRY_URL'), source: 'env' };
  }
  if (config.registry) {
    return { url: normaliseRegistryUrl(config.registry, 'registry in config.json'), source: 'config' };
  }
  return { url: DEFAULT_REGISTRY, source: 'default' };
}
