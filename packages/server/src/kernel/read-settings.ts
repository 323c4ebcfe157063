import type { KeyObject } from 'node:crypto';
import { parseEd25519PrivateKey } from './private-keys.js';
import { SETTINGS, type SettingDeclaration, type SettingName, type SettingValues } from './settings.js';

export type Env = Record<string, string | undefined>;

/**
 * Every declared setting read from `env` by its declaration: a value out of its type or range is a
 * problem (one line each, naming the setting) and reads as its default, so all problems are told at once.
 */
export function readSettings(env: Env, problems: string[]): SettingValues {
  const values: Record<string, unknown> = {};
  for (const [name, declaration] of Object.entries(SETTINGS) as [SettingName, SettingDeclaration][]) {
    const value = env[name]?.trim();
    values[name] = readOne(name, declaration, value === '' ? undefined : value, problems);
  }
  return values as SettingValues;
}

function readOne(
  name: string,
  declared: SettingDeclaration,
  raw: string | undefined,
  problems: string[],
): unknown {
  switch (declared.type) {
    case 'integer': {
      if (raw === undefined) return declared.default;
      const value = Number(raw);
      if (Number.isInteger(value) && value >= declared.min && value <= declared.max) return value;
      problems.push(`${name} must be an integer from ${declared.min} to ${declared.max}, got "${raw}"`);
      return declared.default;
    }
    case 'boolean': {
      const given = raw?.toLowerCase();
      if (given === undefined) return declared.default;
      if (['true', '1', 'yes'].includes(given)) return true;
      if (['false', '0', 'no'].includes(given)) return false;
      problems.push(`${name} must be true or false, got "${given}"`);
      return declared.default;
    }
    case 'instant':
      return instant(name, raw ?? declared.default, declared.default, problems);
    case 'choice': {
      const given = (raw ?? declared.default).toLowerCase();
      const chosen = declared.choices.find((choice) => choice === given);
      if (chosen !== undefined) return chosen;
      problems.push(`${name} must be one of ${declared.choices.join(', ')}`);
      return declared.default;
    }
    case 'ed25519-key':
      return raw === undefined ? undefined : signingKey(name, raw, problems);
    case 'list':
      return commaSeparated(raw);
    case 'text':
      return raw ?? declared.default;
    case 'secret':
      return raw;
  }
}

/** A UTC date (`2027-03-01`, meaning its midnight) or date-time (`2027-03-01T12:00:00Z`), as epoch ms. */
function instant(name: string, raw: string, fallback: string, problems: string[]): number {
  const value = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.test(raw) ? Date.parse(raw) : NaN;
  // Date.parse rolls 2027-02-30 over to March; a date that does not read back the same is refused.
  if (Number.isNaN(value) || new Date(value).toISOString().slice(0, 10) !== raw.slice(0, 10)) {
    problems.push(`${name} must be a UTC date like 2027-03-01 or 2027-03-01T12:00:00Z, got "${raw}"`);
    return Date.parse(fallback);
  }
  return value;
}

/** Parsed here, so a key that cannot sign fails as configuration, before the database is touched. */
function signingKey(name: string, raw: string, problems: string[]): KeyObject | undefined {
  try {
    return parseEd25519PrivateKey(raw, name);
  } catch (error) {
    problems.push((error as Error).message);
    return undefined;
  }
}

/** The entries of a comma-separated setting, trimmed, blank ones dropped. */
function commaSeparated(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** Thrown by a list entry's parser for a refusal with its own wording (else the list's usage line is told). */
export class ListEntryProblem extends Error {}

/**
 * The one parser of the comma-separated lists (URLs, most of them): each entry through `parse`, which
 * returns the entry's value, undefined to drop it (a repeat), or throws. A ListEntryProblem is told as
 * written; any other failure as `usage` with the entry quoted.
 */
export function parseList<T>(
  entries: readonly string[],
  parse: (given: string) => T | undefined,
  usage: string,
  problems: string[],
): T[] {
  const parsed: T[] = [];
  for (const given of entries) {
    try {
      const value = parse(given);
      if (value !== undefined) parsed.push(value);
    } catch (error) {
      problems.push(error instanceof ListEntryProblem ? error.message : `${usage}, got "${given}"`);
    }
  }
  return parsed;
}

/** A URL whose scheme is http or https; throws otherwise. */
export function httpUrl(given: string): URL {
  const url = new URL(given);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  return url;
}
