/**
 * The registry's rules for a profile (interface sections 2.2, 2.3 and 8, plus the limits in
 * docs/decisions/), as a pure function: every problem is reported with its JSON path, so a client can
 * check a profile before it signs and sends it. No I/O and no dependencies, so it also runs in a browser.
 * The registry stays the authority; it additionally compiles `input_schema`/`output_schema` as JSON Schema.
 */

export const PROFILE_LIMITS = {
  nameMaxLength: 100,
  descriptionMaxLength: 1000,
  tagsMaxCount: 20,
  tagMaxLength: 50,
  urlMaxLength: 2048,
  capabilitiesMinCount: 1,
  capabilitiesMaxCount: 50,
  capabilityTypeMaxLength: 100,
  capabilityDescriptionMaxLength: 1000,
} as const;

export interface ProfileProblem {
  /** JSON path of the offending value, e.g. `$.capabilities[0].type`. */
  path: string;
  /** What is wrong and what to do about it. */
  message: string;
  /** Stable machine-readable code. */
  code: ProfileProblemCode;
}

export type ProfileProblemCode =
  | 'NOT_AN_OBJECT'
  | 'REQUIRED'
  | 'WRONG_TYPE'
  | 'TOO_SHORT'
  | 'TOO_LONG'
  | 'TOO_FEW'
  | 'TOO_MANY'
  | 'INVALID_URL'
  | 'UNKNOWN_MEMBER'
  /** Reported by clients that also compile capability schemas (the registry does). */
  | 'INVALID_SCHEMA'
  /** Reported by clients reading a profile file that does not parse. */
  | 'INVALID_JSON';

export interface ProfileCheck {
  /** Problems the registry would refuse the profile for. */
  problems: ProfileProblem[];
  /** Members the registry ignores (usually a typo), reported but not fatal. */
  warnings: ProfileProblem[];
}

/**
 * `register`: a complete profile (name and capabilities required).
 * `update`: a partial profile as sent to `PUT /api/agents/{did}` (every member optional and nullable).
 */
export type ProfileCheckMode = 'register' | 'update';

const PROFILE_MEMBERS = ['name', 'description', 'capabilities', 'tags', 'avatar', 'website'];
const CAPABILITY_MEMBERS = ['type', 'description', 'tags', 'input_schema', 'output_schema'];

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Lengths in characters (code points), as the registry's JSON Schema validation counts them. */
const characters = (value: string): number => [...value].length;

const describe = (value: Json): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

const memberPath = (parent: string, key: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;

class ProblemList {
  readonly problems: ProfileProblem[] = [];
  readonly warnings: ProfileProblem[] = [];
  add(path: string, code: ProfileProblemCode, message: string): void {
    this.problems.push({ path, code, message });
  }
  result(): ProfileCheck {
    return { problems: this.problems, warnings: this.warnings };
  }
  warn(path: string, message: string): void {
    this.warnings.push({ path, code: 'UNKNOWN_MEMBER', message });
  }
}

function checkString(
  list: ProblemList,
  path: string,
  value: Json,
  rule: { min?: number; max: number; label: string },
): void {
  if (typeof value !== 'string') {
    list.add(path, 'WRONG_TYPE', `${rule.label} must be a string, not ${describe(value)}`);
    return;
  }
  const length = characters(value);
  if (rule.min !== undefined && length < rule.min) {
    list.add(path, 'TOO_SHORT', `${rule.label} must not be empty`);
  } else if (length > rule.max) {
    list.add(path, 'TOO_LONG', `${rule.label} must be at most ${rule.max} characters (it has ${length})`);
  }
}

function checkTags(list: ProblemList, path: string, value: Json): void {
  if (!Array.isArray(value)) {
    list.add(path, 'WRONG_TYPE', `tags must be an array of strings, not ${describe(value)}`);
    return;
  }
  if (value.length > PROFILE_LIMITS.tagsMaxCount) {
    list.add(
      path,
      'TOO_MANY',
      `at most ${PROFILE_LIMITS.tagsMaxCount} tags are allowed (there are ${value.length})`,
    );
  }
  value.forEach((tag, index) =>
    checkString(list, `${path}[${index}]`, tag, { max: PROFILE_LIMITS.tagMaxLength, label: 'a tag' }),
  );
}

function checkUrl(list: ProblemList, path: string, value: Json, label: string): void {
  if (typeof value !== 'string') {
    list.add(path, 'WRONG_TYPE', `${label} must be a URL string, not ${describe(value)}`);
    return;
  }
  if (value === '') return; // "" means "none" at registration and "clear it" in an update.
  if (value.length > PROFILE_LIMITS.urlMaxLength) {
    list.add(path, 'TOO_LONG', `${label} must be at most ${PROFILE_LIMITS.urlMaxLength} characters`);
    return;
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    list.add(path, 'INVALID_URL', `${label} must be an absolute http:// or https:// URL`);
  }
}

function checkSchemaMember(list: ProblemList, path: string, value: Json, label: string): void {
  if (!isObject(value)) {
    list.add(path, 'WRONG_TYPE', `${label} must be a JSON Schema object, not ${describe(value)}`);
  }
}

function checkCapability(list: ProblemList, path: string, value: Json): void {
  if (!isObject(value)) {
    list.add(
      path,
      'WRONG_TYPE',
      `a capability must be an object with at least "type", not ${describe(value)}`,
    );
    return;
  }
  if (value.type === undefined) {
    list.add(`${path}.type`, 'REQUIRED', 'a capability needs a type, e.g. "translation"');
  } else {
    checkString(list, `${path}.type`, value.type, {
      min: 1,
      max: PROFILE_LIMITS.capabilityTypeMaxLength,
      label: 'the capability type',
    });
  }
  if (value.description != null) {
    checkString(list, `${path}.description`, value.description, {
      max: PROFILE_LIMITS.capabilityDescriptionMaxLength,
      label: 'the capability description',
    });
  }
  if (value.tags != null) checkTags(list, `${path}.tags`, value.tags);
  for (const member of ['input_schema', 'output_schema'] as const) {
    if (value[member] != null) checkSchemaMember(list, `${path}.${member}`, value[member], member);
  }
  for (const key of Object.keys(value)) {
    if (!CAPABILITY_MEMBERS.includes(key)) {
      list.warn(
        memberPath(path, key),
        `unknown capability member "${key}" is not stored (known: ${CAPABILITY_MEMBERS.join(', ')})`,
      );
    }
  }
}

function checkCapabilities(list: ProblemList, path: string, value: Json): void {
  if (!Array.isArray(value)) {
    list.add(path, 'WRONG_TYPE', `capabilities must be an array, not ${describe(value)}`);
    return;
  }
  if (value.length < PROFILE_LIMITS.capabilitiesMinCount) {
    list.add(path, 'TOO_FEW', 'at least one capability is required, e.g. [{"type": "translation"}]');
  } else if (value.length > PROFILE_LIMITS.capabilitiesMaxCount) {
    list.add(
      path,
      'TOO_MANY',
      `at most ${PROFILE_LIMITS.capabilitiesMaxCount} capabilities are allowed (there are ${value.length})`,
    );
  }
  value.forEach((capability, index) => checkCapability(list, `${path}[${index}]`, capability));
}

/** Every problem of a profile, each with its JSON path; an empty `problems` list means the registry accepts it. */
export function checkProfile(profile: unknown, mode: ProfileCheckMode = 'register'): ProfileCheck {
  const list = new ProblemList();
  if (!isObject(profile)) {
    list.add('$', 'NOT_AN_OBJECT', `a profile must be a JSON object, not ${describe(profile)}`);
    return list.result();
  }
  const required = mode === 'register';

  if (profile.name == null) {
    if (required) list.add('$.name', 'REQUIRED', 'name is required (1-100 characters)');
  } else {
    checkString(list, '$.name', profile.name, { min: 1, max: PROFILE_LIMITS.nameMaxLength, label: 'name' });
  }
  if (profile.description != null) {
    checkString(list, '$.description', profile.description, {
      max: PROFILE_LIMITS.descriptionMaxLength,
      label: 'description',
    });
  }
  if (profile.capabilities == null) {
    if (required) {
      list.add(
        '$.capabilities',
        'REQUIRED',
        'capabilities is required: at least one, e.g. [{"type": "translation"}]',
      );
    }
  } else {
    checkCapabilities(list, '$.capabilities', profile.capabilities);
  }
  if (profile.tags != null) checkTags(list, '$.tags', profile.tags);
  if (profile.avatar != null) checkUrl(list, '$.avatar', profile.avatar, 'avatar');
  if (profile.website != null) checkUrl(list, '$.website', profile.website, 'website');

  for (const key of Object.keys(profile)) {
    if (!PROFILE_MEMBERS.includes(key)) {
      list.warn(
        memberPath('$', key),
        `unknown member "${key}" is ignored by the registry (known: ${PROFILE_MEMBERS.join(', ')})`,
      );
    }
  }
  return list.result();
}
