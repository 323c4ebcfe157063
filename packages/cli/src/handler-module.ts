import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './exit-codes.js';

export type Handler = (input: Record<string, unknown>, ctx: never) => unknown;

const isHandlerMap = (value: unknown): value is Record<string, Handler> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length > 0 &&
  Object.values(value).every((handler) => typeof handler === 'function');

/**
 * The capability handlers a module exports, in the first of these forms found:
 * `export default { translation: async (input, ctx) => ... }`, `export const capabilities = {...}`,
 * or `export default async (input, ctx) => ...` (one function for every capability of the profile).
 */
export async function loadHandlerModule(
  file: string,
  profileCapabilities: string[],
): Promise<Record<string, Handler>> {
  const absolute = path.resolve(file);
  if (!fs.existsSync(absolute)) {
    throw new UsageError(`handler module not found: ${absolute}`, 'FILE_NOT_FOUND');
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(
      `cannot load ${absolute}: ${(error as Error).message}${
        /\.[cm]?ts$/.test(absolute)
          ? ' (compile TypeScript first, or run the CLI under `node --import tsx`)'
          : ''
      }`,
      'INVALID_HANDLER_MODULE',
    );
  }
  if (isHandlerMap(loaded.default)) return loaded.default;
  if (isHandlerMap(loaded.capabilities)) return loaded.capabilities;
  if (typeof loaded.default === 'function') {
    const handler = loaded.default as Handler;
    return Object.fromEntries(profileCapabilities.map((capability) => [capability, handler]));
  }
  throw new UsageError(
    `${absolute} exports no handlers. Export them as \`export default { <capability>: async (input, ctx) => output }\`, ` +
      '`export const capabilities = { ... }`, or `export default async (input, ctx) => output`.',
    'INVALID_HANDLER_MODULE',
  );
}
