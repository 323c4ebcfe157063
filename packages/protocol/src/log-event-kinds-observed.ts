import type { LogEventCheck, LogEventLeaf } from './log-event-types.js';

/** The classes of a probe's answer (docs/federation.md, "Observed"). */
export const OBSERVED_STATUSES = ['answers', 'needs_auth', 'not_mcp', 'not_a2a', 'unreachable'] as const;
export type ObservedStatus = (typeof OBSERVED_STATUSES)[number];

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * `entry.observed`: a probe of a remote entry found another status class or another tools digest than
 * the last one logged (the first observation too). Subject: the remote entry id.
 */
const entryObserved: LogEventCheck = (leaf: LogEventLeaf) => {
  if (typeof leaf.status !== 'string' || !(OBSERVED_STATUSES as readonly string[]).includes(leaf.status))
    return `status is not one of ${OBSERVED_STATUSES.join(', ')}`;
  if (
    leaf.tools_digest !== null &&
    (typeof leaf.tools_digest !== 'string' || !DIGEST.test(leaf.tools_digest))
  )
    return 'tools_digest is neither null nor "sha256:" and 64 lowercase hex digits';
  if (
    leaf.tools_count !== null &&
    (!Number.isSafeInteger(leaf.tools_count) || (leaf.tools_count as number) < 0)
  )
    return 'tools_count is neither null nor a count';
  if ((leaf.tools_digest === null) !== (leaf.tools_count === null))
    return 'tools_digest and tools_count are both null or both set';
  return undefined;
};

export const OBSERVED_EVENT_KINDS: Readonly<Record<string, LogEventCheck>> = {
  'entry.observed': entryObserved,
};
