import path from 'node:path';

import { httpUrl, ListEntryProblem, parseList } from './read-settings.js';

export type DatabaseConfig =
  | {
      kind: 'sqlite';
      path: string;
      busyTimeoutMs?: number;
      /** Bytes of the database file SQLite reads through a memory map instead of read() calls; 0 turns it off. */
      mmapBytes?: number;
    }
  | {
      kind: 'postgres';
      url: string;
      poolSize: number;
      statementTimeoutMs: number;
      connectTimeoutMs: number;
      /** How long start-up keeps retrying a PostgreSQL that does not accept connections yet. */
      startupWaitSeconds?: number;
    };

/** Parsers of the settings whose values need more than a type: URLs, origins, the database URL. */

export function parsePublicUrl(raw: string, problems: string[]): { publicUrl: string; didWebDomain: string } {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      problems.push(`PUBLIC_URL must be an http(s) URL, got "${raw}"`);
    } else if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
      problems.push(`PUBLIC_URL must be an origin without path, query or fragment, got "${raw}"`);
    }
    return {
      publicUrl: url.origin,
      didWebDomain: url.port === '' ? url.hostname : `${url.hostname}%3A${url.port}`,
    };
  } catch {
    problems.push(`PUBLIC_URL must be a URL, got "${raw}"`);
    return { publicUrl: raw, didWebDomain: 'localhost' };
  }
}

/** MCP_ALLOWED_ORIGINS: an origin in any spelling (capitals, default port, trailing slash), but nothing beyond it. */
export function parseOrigins(entries: string[], problems: string[]): string[] {
  return parseList(
    entries,
    (given) => {
      const url = httpUrl(given);
      const originOnly =
        url.pathname === '/' &&
        url.search === '' &&
        url.hash === '' &&
        url.username === '' &&
        url.password === '';
      if (!originOnly || /[?#]/.test(given)) throw new Error('not an origin');
      return url.origin;
    },
    'MCP_ALLOWED_ORIGINS must be comma-separated http(s) origins such as https://app.example',
    problems,
  );
}

interface DatabaseTuning {
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  startupWaitSeconds: number;
  busyTimeoutMs: number;
  mmapBytes: number;
}

export function parseDatabaseUrl(
  raw: string,
  cwd: string,
  problems: string[],
  tuning: DatabaseTuning,
): DatabaseConfig {
  const { busyTimeoutMs, mmapBytes, ...postgres } = tuning;
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') {
      problems.push('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/registry.db');
      return { kind: 'sqlite', path: '', busyTimeoutMs, mmapBytes };
    }
    const resolved = file === ':memory:' ? file : path.resolve(cwd, file);
    return { kind: 'sqlite', path: resolved, busyTimeoutMs, mmapBytes };
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://'))
    return { kind: 'postgres', url: raw, ...postgres };
  problems.push(`DATABASE_URL must start with sqlite: or postgres://, got "${raw}"`);
  return { kind: 'sqlite', path: '', busyTimeoutMs, mmapBytes };
}

/** At most this many referrals: every referrals answer carries them all. */
export const ARD_REFERRALS_MAX = 20;

/**
 * ARD_REFERRALS: comma-separated ARD API bases of other registries (the `url` of the
 * `application/ai-registry+json` entry each publishes), as `https://host[:port]/path` without a trailing
 * slash. Each must be a URL a client may follow: http(s), no credentials, query or fragment, a host name
 * that can be an ARD publisher segment, and not this registry's own.
 */
export function parseArdReferrals(entries: string[], publicUrl: string, problems: string[]): string[] {
  const bases: string[] = [];
  const refuse = (message: string): never => {
    throw new ListEntryProblem(message);
  };
  parseList(
    entries,
    (given) => {
      let url: URL;
      try {
        url = new URL(given);
      } catch {
        return refuse(
          `ARD_REFERRALS must be comma-separated http(s) URLs of ARD registry APIs, got "${given}"`,
        );
      }
      const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        refuse(`ARD_REFERRALS must list http(s) URLs, got "${given}"`);
      if (url.username !== '' || url.password !== '' || url.search !== '' || /[?#]/.test(given))
        refuse(`ARD_REFERRALS URLs may not carry credentials, a query or a fragment, got "${given}"`);
      if (!/^[a-z0-9.-]+$/.test(url.hostname))
        refuse(
          `ARD_REFERRALS URLs need a host name (an ARD publisher is a domain name, not an IP v6 address), got "${given}"`,
        );
      if (base === `${publicUrl}/ard`)
        refuse(`ARD_REFERRALS may not name this registry's own ARD API (${base})`);
      if (bases.includes(base)) refuse(`ARD_REFERRALS names ${base} twice`);
      bases.push(base);
      return base;
    },
    'ARD_REFERRALS must be comma-separated http(s) URLs of ARD registry APIs',
    problems,
  );
  if (bases.length > ARD_REFERRALS_MAX) {
    problems.push(`ARD_REFERRALS lists ${bases.length} registries; at most ${ARD_REFERRALS_MAX}`);
  }
  return bases.slice(0, ARD_REFERRALS_MAX);
}
