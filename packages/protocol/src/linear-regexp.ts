import { RE2JS } from 're2js';

/**
 * The regular-expression engine for agents' JSON Schemas, shared by the registry, the SDK and the CLI
 * so a `pattern` is accepted and matched the same everywhere: RE2 semantics (re2js, pure JavaScript),
 * linear in the input whatever the pattern says. Backtracking constructs (lookaround, backreferences)
 * do not compile, so a schema using them is refused. Pass it to Ajv as `code: { regExp: linearRegExp }`.
 */
export const linearRegExp = Object.assign(
  (pattern: string, _flags: string) => {
    const compiled = RE2JS.compile(pattern);
    return {
      // JSON Schema patterns are unanchored: a match anywhere in the string counts.
      test: (text: string): boolean => compiled.matcher(text).find(),
      toString: (): string => `re2:${pattern}`,
    };
  },
  { code: 'linearRegExp' },
);
