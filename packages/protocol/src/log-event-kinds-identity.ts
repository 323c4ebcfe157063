import type { LogEventCheck, LogEventLeaf } from './log-event-types.js';

/** Event kinds of keys that rotate and recover, domains and handles (docs/transparency-log.md, "Event kinds"). */

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

/** A claimed domain: a lowercase host name, with a port only on development registries. */
const DOMAIN = /^[a-z0-9.-]{1,253}(:[0-9]{1,5})?$/;
/** A handle: the reverse-DNS form of a domain, "/", a name. */
const HANDLE = /^[a-z0-9.-]{1,253}\/[a-z0-9][a-z0-9._-]{0,63}$/;

const domainProblem = (leaf: LogEventLeaf): string | undefined =>
  typeof leaf.domain === 'string' && DOMAIN.test(leaf.domain) ? undefined : 'domain is not a domain name';

const domainClaimed: LogEventCheck = (leaf) =>
  domainProblem(leaf) ??
  (leaf.method === 'https' || leaf.method === 'dns' ? undefined : 'method is not "https" or "dns"');

const domainDropped: LogEventCheck = (leaf) =>
  domainProblem(leaf) ??
  (leaf.reason === 'dropped' || leaf.reason === 'proof_gone'
    ? undefined
    : 'reason is not "dropped" or "proof_gone"');

const handleOrNull = (value: unknown): boolean =>
  value === null || (typeof value === 'string' && HANDLE.test(value));

const handleChanged: LogEventCheck = (leaf) =>
  !handleOrNull(leaf.handle)
    ? 'handle is not a handle or null'
    : !handleOrNull(leaf.previous_handle)
      ? 'previous_handle is not a handle or null'
      : leaf.handle === leaf.previous_handle
        ? 'handle did not change'
        : undefined;

export const IDENTITY_EVENT_KINDS: Readonly<Record<string, LogEventCheck>> = {
  'key.rotated': rotated,
  'key.recovery_set': recoverySet,
  'key.recovery_started': recoveryStarted,
  'key.recovery_cancelled': recoveryCancelled,
  'key.recovery_finished': recoveryFinished,
  'domain.claimed': domainClaimed,
  'domain.dropped': domainDropped,
  'handle.changed': handleChanged,
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
