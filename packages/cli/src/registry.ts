import { RegistryClient, type AgentKey } from '@agent-registry/sdk';
import type { CliContext } from './context.js';
import { AuthRequiredError } from './exit-codes.js';
import { readKey } from './keys.js';

export interface Connection {
  client: RegistryClient;
  /** The agent's own DID, when the command acts as the agent. */
  did: string;
  key: AgentKey;
}

/** A client for reads: no key, no token. */
export function anonymousClient(cli: CliContext): RegistryClient {
  return new RegistryClient({ registry: cli.registry().url });
}

/**
 * A client acting as this agent: its key, and the DID and token saved for the current registry.
 * A token the SDK renews (by signature) is written back to config.json.
 */
export async function agentClient(cli: CliContext): Promise<Connection> {
  const key = await readKey(cli);
  const registry = cli.registry().url;
  const session = cli.session();
  const did = session?.did ?? (await key.did());
  if (!did) {
    throw new AuthRequiredError(
      `this agent is not registered at ${registry}: run \`agent-registry register\` (or pass --registry)`,
      'NOT_REGISTERED',
    );
  }
  const client = new RegistryClient({
    registry,
    key,
    did,
    ...(session ? { token: session.token } : {}),
    onToken: (renewed) => cli.saveSession(renewed),
  });
  return { client, did, key };
}

/** The DID a command is about: the argument, else this agent's own. */
export async function targetDid(cli: CliContext, did: string | undefined): Promise<string> {
  if (did) return did;
  const session = cli.session();
  if (session) return session.did;
  const key = await readKey(cli);
  const own = await key.did();
  if (own) return own;
  throw new AuthRequiredError(
    `give a DID, or register this agent at ${cli.registry().url} first (\`agent-registry register\`)`,
    'NOT_REGISTERED',
  );
}
