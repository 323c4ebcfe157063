import crypto from 'node:crypto';
import { startRegistryProcess, type RegistryProcess, type TestDatabase } from '@agent-registry/testkit';

/** The registry's token key, known to tests so they can mint tokens the registry accepts (or not). */
export const tokenSigningKey = crypto.generateKeyPairSync('ed25519').privateKey;
const tokenSigningPem = tokenSigningKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/**
 * A real registry as its own process, as users run it, on `database`: the SDK tests talk to it over
 * HTTP only, can stop and restart it, and mint tokens with its key; it delivers webhooks to this
 * machine's test receivers.
 */
export function registryProcess(
  database: TestDatabase,
  options: { publicUrl?: string; env?: Record<string, string> } = {},
): Promise<RegistryProcess> {
  return startRegistryProcess({
    DATABASE_URL: database.url,
    TOKEN_SIGNING_KEY: tokenSigningPem,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...(options.publicUrl === undefined ? {} : { PUBLIC_URL: options.publicUrl }),
    ...options.env,
  });
}
