import type { RegistryError } from '@agent-registry/sdk';

/**
 * Whether `error` is the SDK's RegistryError, without loading the SDK to ask `instanceof`: a command's
 * definition stays light, and the SDK loads only when a command talks to a registry.
 */
export function isRegistryError(error: unknown): error is RegistryError {
  return (
    error instanceof Error &&
    typeof (error as { status?: unknown }).status === 'number' &&
    typeof (error as { code?: unknown }).code === 'string' &&
    'details' in error
  );
}
