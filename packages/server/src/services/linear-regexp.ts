import type { CodeOptions } from 'ajv';
import { RE2JS } from 're2js';

/**
 * Ajv's regular-expression engine for agents' schemas: RE2 semantics (re2js, pure JavaScript), so a
 * `pattern` or `patternProperties` key matches in time linear in the input whatever it says. Backtracking
 * constructs (lookaround, backreferences) do not compile, and the schema is refused when published.
 */
export const linearRegExp: NonNullable<CodeOptions['regExp']> = Object.assign(
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
