import type { LogEventCheck, LogEventLeaf } from './log-event-types.js';

/** Event kinds of keys that rotate and recover (docs/transparency-log.md, "Event kinds"). */

const KEY_TYPE = /^(ed25519|secp256k1)$/;
const HEX_KEY = /^[0-9a-f]{64,130}$/;

const keyProblem = (leaf: LogEventLeaf, prefix: string): string | undefined => {
  const type = leaf[`${prefix}_key_type`];
  const key = leaf[`${prefix}_public_key`];
  if (typeof type !== 'string' || !KEY_TYPE.test(type)) return `${prefix}_key_type is not a key type`;
  if (typeof key !== 'string' || !HEX_KEY.test(key)) return `${prefix}_public_key is not a hex key`;
  return undefined;
};

const generationProblem = (leaf: LogEventLeaf): string | undefined =>
  Number.isSafeInteger(leaf.key_generation) && (leaf.key_generation as number) > 0
    ? undefined
    : 'key_generation is not a positive integer';

/** A rotation: the agent's key (and generation) after it, and the key it replaced. */
const rotated: LogEventCheck = (leaf) =>
  keyProblem(leaf, 'old') ??
  keyProblem(leaf, 'new') ??
  generationProblem(leaf) ??
  (leaf.via === 'rotation' || leaf.via === 'recovery' ? undefined : 'via is not "rotation" or "recovery"');

const recoverySet: LogEventCheck = (leaf) => keyProblem(leaf, 'recovery');

const recoveryStarted: LogEventCheck = (leaf) =>
  keyProblem(leaf, 'new') ??
  (Number.isSafeInteger(leaf.completes_at) ? undefined : 'completes_at is not milliseconds');

const recoveryCancelled: LogEventCheck = (leaf) =>
  leaf.reason === 'cancelled' || leaf.reason === 'rotated'
    ? undefined
    : 'reason is not "cancelled" or "rotated"';

const recoveryFinished: LogEventCheck = (leaf) => keyProblem(leaf, 'new') ?? generationProblem(leaf);

export const IDENTITY_EVENT_KINDS: Readonly<Record<string, LogEventCheck>> = {
  'key.rotated': rotated,
  'key.recovery_set': recoverySet,
  'key.recovery_started': recoveryStarted,
  'key.recovery_cancelled': recoveryCancelled,
  'key.recovery_finished': recoveryFinished,
};

/** The key a `key.rotated` leaf gives its subject, for followers that keep the agent's key. */
export function rotatedKey(
  leaf: LogEventLeaf,
): { keyType: string; publicKey: string; generation: number } | undefined {
  if (leaf.op !== 'key.rotated') return undefined;
  return {
    keyType: leaf.new_key_type as string,
    publicKey: leaf.new_public_key as string,
    generation: leaf.key_generation as number,
  };
}
