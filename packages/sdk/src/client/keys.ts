import {
  keyRotationMessage,
  recoveryCancelMessage,
  recoverySetMessage,
  recoveryStartMessage,
} from '@agent-registry/protocol';
import type { AgentKey } from '../keys.js';
import type { KeyChangeResult, KeyRecoveryStatus } from '../types.js';
import type { MessageClock } from './session.js';
import { enc, type Transport } from './transport.js';

/**
 * Key rotation and recovery of a did:web agent (docs/identity.md). Each request is signed by the
 * keys docs/signing.md, section "Key rotation and recovery", names; the timestamp comes from the
 * client's message clock so that two messages never share one.
 */

interface Signed {
  did: string;
  audience: string;
  clock: MessageClock;
}

/** The signed body of a rotation from `current` to `next`: keep it to resend after a lost answer. */
export async function signedRotation(
  { did, audience, clock }: Signed,
  current: AgentKey,
  next: AgentKey,
): Promise<Record<string, unknown>> {
  const fields = {
    did,
    audience,
    timestamp: clock.next(),
    new_key_type: next.keyType,
    new_public_key: await next.publicKey(),
  };
  const message = keyRotationMessage(fields);
  const { did: _did, ...body } = fields;
  return {
    ...body,
    signature: await current.sign(message),
    new_key_signature: await next.sign(message),
  };
}

export function rotateKey(
  transport: Transport,
  did: string,
  body: Record<string, unknown>,
): Promise<KeyChangeResult> {
  return transport.request('POST', `/api/agents/${enc(did)}/keys/rotate`, { body });
}

export async function setRecoveryKey(
  transport: Transport,
  { did, audience, clock }: Signed,
  current: AgentKey,
  recovery: AgentKey,
): Promise<KeyRecoveryStatus> {
  const fields = {
    audience,
    timestamp: clock.next(),
    recovery_key_type: recovery.keyType,
    recovery_public_key: await recovery.publicKey(),
  };
  const signature = await current.sign(recoverySetMessage({ did, ...fields }));
  return transport.request('POST', `/api/agents/${enc(did)}/keys/recovery`, {
    body: { ...fields, signature },
  });
}

export async function startRecovery(
  transport: Transport,
  { did, audience, clock }: Signed,
  recovery: AgentKey,
  next: AgentKey,
): Promise<KeyRecoveryStatus> {
  const fields = {
    audience,
    timestamp: clock.next(),
    new_key_type: next.keyType,
    new_public_key: await next.publicKey(),
  };
  const signature = await recovery.sign(recoveryStartMessage({ did, ...fields }));
  return transport.request('POST', `/api/agents/${enc(did)}/keys/recovery/start`, {
    body: { ...fields, signature },
  });
}

export async function cancelRecovery(
  transport: Transport,
  { did, audience, clock }: Signed,
  current: AgentKey,
): Promise<KeyRecoveryStatus> {
  const fields = { audience, timestamp: clock.next() };
  const signature = await current.sign(recoveryCancelMessage({ did, ...fields }));
  return transport.request('POST', `/api/agents/${enc(did)}/keys/recovery/cancel`, {
    body: { ...fields, signature },
  });
}

export function getKeyRecovery(transport: Transport, did: string): Promise<KeyRecoveryStatus> {
  return transport.request('GET', `/api/agents/${enc(did)}/keys/recovery`);
}
