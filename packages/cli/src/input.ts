import fs from 'node:fs';
import { UsageError } from './exit-codes.js';

/**
 * The JSON object of an `--input` value: inline JSON, `@file.json`, or `@-` for standard input.
 * Anything else is a usage error naming the option and what it expected.
 */
export function readJsonObjectArgument(value: string, option: string): Record<string, unknown> {
  let text = value;
  let source = option;
  if (value.startsWith('@')) {
    const file = value.slice(1);
    source = file === '-' ? 'standard input' : file;
    try {
      text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (error) {
      throw new UsageError(
        `${option}: cannot read ${source}: ${(error as Error).message}`,
        'FILE_UNREADABLE',
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${option}: ${source} is not valid JSON (${(error as Error).message}); e.g. ${option} '{"text": "hello"}' or ${option} @input.json`,
      'INVALID_JSON',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${option} must be a JSON object, e.g. '{"text": "hello"}'`, 'INVALID_INPUT');
  }
  return parsed as Record<string, unknown>;
}
