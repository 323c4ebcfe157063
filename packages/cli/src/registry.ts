import type { AgentKey, RegistryClient } from '@agent-registry/sdk';
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
export async function anonymousClient(cli: CliContext): Promise<RegistryClient> {
  const { RegistryClient } = await import('@agent-registry/sdk');
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
  if (!did) throw notRegisteredHere(cli);
  const { RegistryClient } = await import('@agent-registry/sdk');
  const client = new RegistryClient({
    registry,
    key,
    did,
    ...(session ? { token: session.token } : {}),
    onToken: (renewed) => cli.saveSession(renewed),
  });
  return { client, did, key };
}

/** A handle (`com.example/translator`): a "/" and, unlike a DID or a remote entry id, no ":". */
export const isHandle = (ref: string): boolean => ref.includes('/') && !ref.includes(':');

/** A DID as given, or the DID of the agent holding a handle (docs/identity.md, "Domains and handles"). */
export async function resolveAgent(cli: CliContext, ref: string): Promise<string> {
  if (!isHandle(ref)) return ref;
  return (await (await anonymousClient(cli)).getAgentByHandle(ref)).did;
}

/** The DID a command is about: the argument (a DID or a handle), else this agent's own. */
export async function targetDid(cli: CliContext, did: string | undefined): Promise<string> {
  if (did) return resolveAgent(cli, did);
  const session = cli.session();
  if (session) return session.did;
  const key = await readKey(cli);
  const own = await key.did();
  if (own) return own;
  const elsewhere = registeredElsewhere(cli);
  throw new AuthRequiredError(
    elsewhere.length > 0
      ? `give a DID, or ${useRegistry(cli, elsewhere)}`
      : `give a DID, or register this agent at ${cli.registry().url} first (\`agent-registry register\`)`,
    'NOT_REGISTERED',
  );
}

/** Registries other than the current one where this agent holds a session. */
function registeredElsewhere(cli: CliContext): string[] {
  const current = cli.registry().url;
  return Object.keys(cli.readConfig().sessions).filter((url) => url !== current);
}

/** How to reach the registry (or registries) the agent is registered at instead of the current one. */
function useRegistry(cli: CliContext, elsewhere: string[]): string {
  const [first] = elsewhere;
  const where = elsewhere.length === 1 ? first : `${elsewhere.join(', ')}; for example ${first}`;
  const source = cli.registry().source;
  const from =
    source === 'flag'
      ? 'the --registry option'
      : source === 'env'
        ? 'AGENT_REGISTRY_URL'
        : 'the default registry';
  return (
    `this agent is registered at ${where}, not at ${cli.registry().url} (from ${from}): ` +
    `add \`--registry ${first}\` or make it the default with \`agent-registry config set registry ${first}\``
  );
}

/** Exit 4 for an agent with no session at the current registry, naming where it has one, if anywhere. */
function notRegisteredHere(cli: CliContext): AuthRequiredError {
  const elsewhere = registeredElsewhere(cli);
  return new AuthRequiredError(
    elsewhere.length > 0
      ? useRegistry(cli, elsewhere)
      : `this agent is not registered at ${cli.registry().url}: run \`agent-registry register\` (or pass --registry)`,
    'NOT_REGISTERED',
  );
}
