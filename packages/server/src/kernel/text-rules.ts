import { BadRequestError } from './errors.js';
import type { ErrorCode } from './error-codes.js';

/**
 * Rules for text the registry accepts. Every string must be well-formed Unicode (a lone surrogate is
 * not a character, and each database stores it differently, so the stored profile would differ from
 * the signed one), and text the registry stores or searches may not carry U+0000 (PostgreSQL text
 * cannot hold it). Opaque invocation payloads may carry U+0000: they travel as JSON, escaped.
 */

export interface TextProblem {
  /** Where, e.g. "profile.capabilities[0].type" or "query capability". */
  field: string;
  problem: string;
}

// With the u flag a lone surrogate is one code point of category Cs; paired ones form a character.
const LONE_SURROGATE = /\p{Cs}/u;

function describe(text: string, allowNul: boolean): string | undefined {
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  if (!allowNul && text.includes('\u0000')) return 'contains U+0000 (NUL), which is not accepted in text';
  return undefined;
}

/** "profile" + "name" -> "profile.name"; "query" + "tags" -> "query tags" (how errors name fields). */
const member = (path: string, key: string): string => {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path}[${JSON.stringify(key)}]`;
  if (path === '') return key;
  return path === 'query' || path === 'path' ? `${path} ${key}` : `${path}.${key}`;
};

/**
 * The first string (or member name) in `value` that breaks the rules above. Members named in
 * `opaque` (top-level names, e.g. "input") are payloads: checked for well-formedness only.
 */
export function findTextProblem(
  value: unknown,
  path = '',
  opaque: readonly string[] = [],
  allowNul = false,
): TextProblem | undefined {
  if (typeof value === 'string') {
    const problem = describe(value, allowNul);
    return problem === undefined ? undefined : { field: path === '' ? 'body' : path, problem };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findTextProblem(value[index], `${path}[${index}]`, [], allowNul);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const where = member(path, key);
    const keyProblem = describe(key, allowNul);
    if (keyProblem !== undefined) return { field: where, problem: `has a member name that ${keyProblem}` };
    const found = findTextProblem(item, where, [], allowNul || (path === '' && opaque.includes(key)));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Any surrogate code unit (paired or lone) or U+0000: text without one has no problem to look for. */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this looks for
const SUSPECT = /[\u0000\ud800-\udfff]/;

/**
 * Whether `value` holds a string or member name that findTextProblem must look at closely. Runs on
 * every request (path, query and body), so it builds no field names: almost all text passes here.
 */
function mayHaveTextProblem(value: unknown): boolean {
  if (typeof value === 'string') return SUSPECT.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(mayHaveTextProblem);
  for (const key of Object.keys(value)) {
    if (SUSPECT.test(key) || mayHaveTextProblem((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

export function assertValidText(value: unknown, path: string, opaque: readonly string[] = []): void {
  if (!mayHaveTextProblem(value)) return;
  const found = findTextProblem(value, path, opaque);
  if (found !== undefined) {
    throw new BadRequestError('INVALID_TEXT', `${found.field} ${found.problem}`);
  }
}

/** Controls that reorder how text is displayed (RLO, LRI, ...) or are invisible marks of direction. */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
/** A name must show something: a letter, digit, symbol or punctuation mark. */
const VISIBLE = /[\p{L}\p{N}\p{S}\p{P}]/u;
const CONTROL = /\p{Cc}/u;

/** Agent names: no bidi controls or control characters, and something visible besides spaces and marks. */
export function assertDisplayName(field: string, name: string): void {
  if (name.trim() === '' || !VISIBLE.test(name)) {
    throw new BadRequestError(
      'INVALID_NAME',
      `${field} must contain a visible character (a letter, digit, symbol or punctuation), not only spaces, marks or zero-width characters`,
    );
  }
  if (CONTROL.test(name)) {
    throw new BadRequestError(
      'INVALID_NAME',
      `${field} must not contain control characters such as newlines or tabs`,
    );
  }
  assertNoBidiControls(field, name, 'INVALID_NAME');
}

/** Identifiers shown to people (capability types, tags) may not reorder the text around them. */
export function assertNoBidiControls(field: string, text: string, code: ErrorCode = 'INVALID_TEXT'): void {
  const found = BIDI_CONTROLS.exec(text);
  if (found !== null) {
    const codePoint = found[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0') ?? '';
    throw new BadRequestError(
      code,
      `${field} must not contain bidirectional control characters (found U+${codePoint}); they make text display in a different order than it is stored`,
    );
  }
}
