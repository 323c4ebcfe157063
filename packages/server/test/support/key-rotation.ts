import {
  EMPTY_FOLLOW_STATE,
  entryBundlePath,
  extendLog,
  isProfileLeaf,
  keyRotationMessage,
  type LogEventLeaf,
  recoveryCancelMessage,
  recoverySetMessage,
  recoveryStartMessage,
} from '@agent-registry/protocol';
import { TEST_PUBLIC_URL, agentPath, type TestAgent } from '@agent-registry/testkit';
import type { TestRegistry } from '@agent-registry/testkit/in-process';

/** The signed bodies of key changes, made with the testkit's agents (their sign() follows each key type's rule). */

export async function rotationBody(
  did: string,
  current: TestAgent,
  next: TestAgent,
  timestamp: number,
  audience = TEST_PUBLIC_URL,
): Promise<Record<string, unknown>> {
  const message = keyRotationMessage({
    did,
    audience,
    timestamp,
    new_key_type: next.keyType,
    new_public_key: next.publicKey,
  });
  return {
    new_key_type: next.keyType,
    new_public_key: next.publicKey,
    audience,
    timestamp,
    signature: await current.sign(message),
    new_key_signature: await next.sign(message),
  };
}

export async function recoverySetBody(
  did: string,
  current: TestAgent,
  recovery: TestAgent,
  timestamp: number,
): Promise<Record<string, unknown>> {
  const fields = {
    recovery_key_type: recovery.keyType,
    recovery_public_key: recovery.publicKey,
    audience: TEST_PUBLIC_URL,
    timestamp,
  };
  return { ...fields, signature: await current.sign(recoverySetMessage({ did, ...fields })) };
}

export async function recoveryStartBody(
  did: string,
  recovery: TestAgent,
  next: TestAgent,
  timestamp: number,
): Promise<Record<string, unknown>> {
  const fields = {
    new_key_type: next.keyType,
    new_public_key: next.publicKey,
    audience: TEST_PUBLIC_URL,
    timestamp,
  };
  return { ...fields, signature: await recovery.sign(recoveryStartMessage({ did, ...fields })) };
}

export async function recoveryCancelBody(
  did: string,
  current: TestAgent,
  timestamp: number,
): Promise<Record<string, unknown>> {
  const fields = { audience: TEST_PUBLIC_URL, timestamp };
  return { ...fields, signature: await current.sign(recoveryCancelMessage({ did, ...fields })) };
}

export const postKeys = (
  registry: TestRegistry,
  did: string,
  suffix: string,
  payload: Record<string, unknown>,
) => registry.app.inject({ method: 'POST', url: agentPath(did, `/keys/${suffix}`), payload });

/** A token for `agent` from POST /api/auth/token. */
export const login = async (registry: TestRegistry, did: string, agent: TestAgent) => {
  const timestamp = registry.clock.now();
  return registry.app.inject({
    method: 'POST',
    url: '/api/auth/token',
    payload: {
      did,
      audience: TEST_PUBLIC_URL,
      timestamp,
      signature: await agent.sign(agent.authenticationMessage(did, timestamp)),
    },
  });
};

/** Every event leaf of the registry's log, through the protocol package's follower (which proves each one). */
export async function followedEvents(registry: TestRegistry): Promise<LogEventLeaf[]> {
  const get = (url: string) => registry.app.inject({ method: 'GET', url });
  const verifierKey = (await get('/log/verifier-key')).body.trim();
  const followed = await extendLog(
    {
      checkpoint: async () => (await get('/log/checkpoint')).body,
      entryBundle: async (index, width) => (await get(`/log/${entryBundlePath(index, width)}`)).rawPayload,
    },
    verifierKey,
    EMPTY_FOLLOW_STATE,
  );
  return followed.entries.filter((leaf): leaf is LogEventLeaf => !isProfileLeaf(leaf));
}
