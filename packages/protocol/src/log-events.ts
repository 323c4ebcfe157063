import { LogVerificationError } from './log-errors.js';
import type { LogEventCheck, LogEventLeaf } from './log-event-types.js';
import { OBSERVED_EVENT_KINDS } from './log-event-kinds-observed.js';
import { IDENTITY_EVENT_KINDS } from './log-event-kinds-identity.js';
import { MODERATION_EVENT_KINDS } from './log-event-kinds-moderation.js';

export type { LogEventCheck, LogEventLeaf } from './log-event-types.js';

/**
 * The event kinds this version knows, each with the check of its own fields. A follower verifies every
 * event leaf's place in the tree; a kind it does not know is well formed when the common fields are, and
 * is passed on for the caller to skip, so a registry can add kinds without stopping older followers.
 */
export const LOG_EVENT_KINDS: Readonly<Record<string, LogEventCheck>> = Object.freeze({
  ...OBSERVED_EVENT_KINDS,
  ...IDENTITY_EVENT_KINDS,
  ...MODERATION_EVENT_KINDS,
});

const EVENT_OP = /^[a-z][a-z0-9_.]{0,63}$/;

/** An event leaf's common fields checked, then its kind's own when the kind is known. */
export function decodeEventLeaf(leaf: Record<string, unknown>, where: string): LogEventLeaf {
  const problem = commonProblem(leaf);
  if (problem !== undefined) throw new LogVerificationError(`${where} is not an event leaf: ${problem}`);
  const event = leaf as LogEventLeaf;
  const kindProblem = Object.hasOwn(LOG_EVENT_KINDS, event.op)
    ? LOG_EVENT_KINDS[event.op]?.(event)
    : undefined;
  if (kindProblem !== undefined) {
    throw new LogVerificationError(`${where} is not a well-formed "${event.op}" event: ${kindProblem}`);
  }
  return event;
}

/** True when this version knows the event's kind (and so checked its fields). */
export function isKnownEvent(leaf: LogEventLeaf): boolean {
  return Object.hasOwn(LOG_EVENT_KINDS, leaf.op);
}

function commonProblem(leaf: Record<string, unknown>): string | undefined {
  if (typeof leaf.v !== 'number') return 'v is not a number';
  if (!Number.isSafeInteger(leaf.seq)) return 'seq is not an integer';
  if (typeof leaf.op !== 'string' || !EVENT_OP.test(leaf.op)) {
    return 'op is not a kind name (lowercase letters, digits, "_" and ".")';
  }
  if (typeof leaf.subject !== 'string' || leaf.subject.length === 0)
    return 'subject is not a non-empty string';
  if (typeof leaf.time !== 'number' || !Number.isSafeInteger(leaf.time)) return 'time is not milliseconds';
  for (const [field, value] of Object.entries(leaf)) {
    if (value !== null && typeof value === 'object')
      return `${field} is not a string, number, boolean or null`;
  }
  return undefined;
}
