import fs from 'node:fs';
import {
  checkProfile,
  linearRegExp,
  type ProfileCheck,
  type ProfileCheckMode,
} from '@agent-registry/protocol';
import { Ajv } from 'ajv';
import { UsageError } from '../exit-codes.js';

// Same library and options as the registry, so a schema passes here exactly when it passes there.
const schemaChecker = new Ajv({
  strict: false,
  validateSchema: true,
  addUsedSchema: false,
  code: { regExp: linearRegExp },
});

function schemaProblem(schema: object): string | undefined {
  if (!schemaChecker.validateSchema(schema)) return schemaChecker.errorsText(schemaChecker.errors);
  try {
    schemaChecker.compile(schema);
  } catch (error) {
    return error instanceof Error ? error.message : 'it does not compile';
  } finally {
    schemaChecker.removeSchema(schema);
  }
  return undefined;
}

/**
 * The shared profile rules (`checkProfile` of @agent-registry/protocol) plus what the registry also
 * checks: that every `input_schema` and `output_schema` is a JSON Schema it can compile safely.
 */
export function checkProfileFully(profile: unknown, mode: ProfileCheckMode = 'register'): ProfileCheck {
  const result = checkProfile(profile, mode);
  const capabilities = (profile as { capabilities?: unknown } | null)?.capabilities;
  if (!Array.isArray(capabilities)) return result;
  capabilities.forEach((capability: unknown, index) => {
    if (typeof capability !== 'object' || capability === null) return;
    for (const member of ['input_schema', 'output_schema'] as const) {
      const schema = (capability as Record<string, unknown>)[member];
      if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) continue;
      const problem = schemaProblem(schema);
      if (problem !== undefined) {
        result.problems.push({
          path: `$.capabilities[${index}].${member}`,
          code: 'INVALID_SCHEMA',
          message: `not a usable JSON Schema: ${problem}`,
        });
      }
    }
  });
  return result;
}

export type ProfileFile =
  { ok: true; profile: Record<string, unknown>; check: ProfileCheck } | { ok: false; check: ProfileCheck };

/**
 * Reads and checks a profile file. A missing file is a usage error; a file that is not JSON is a
 * problem at `$` (with the parser's position), like any other problem of the profile.
 */
export function readProfileFile(file: string, mode: ProfileCheckMode): ProfileFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new UsageError(
        `profile file not found at ${file}. Create one with \`agent-registry init\` or pass --profile <file>.`,
        'FILE_NOT_FOUND',
        { file },
      );
    }
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`, 'FILE_UNREADABLE', { file });
  }
  let profile: unknown;
  try {
    profile = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      check: {
        problems: [
          { path: '$', code: 'INVALID_JSON', message: `not valid JSON: ${(error as Error).message}` },
        ],
        warnings: [],
      },
    };
  }
  const check = checkProfileFully(profile, mode);
  if (check.problems.length > 0) return { ok: false, check };
  return { ok: true, profile: profile as Record<string, unknown>, check };
}
