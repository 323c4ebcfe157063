import type { LogEventCheck, LogEventLeaf } from './log-event-types.js';

/** Event kinds of the operator's moderation decisions (docs/transparency-log.md, "Event kinds"). */

/** The classes an abuse report or a suspension names. */
export const MODERATION_REASONS = ['malware', 'impersonation', 'spam', 'broken', 'other'] as const;
export type ModerationReason = (typeof MODERATION_REASONS)[number];

/** The classes a restoration names. */
export const RESTORATION_REASONS = ['resolved', 'mistaken', 'appeal', 'other'] as const;
export type RestorationReason = (typeof RESTORATION_REASONS)[number];

const reasonIn =
  (reasons: readonly string[]): LogEventCheck =>
  (leaf: LogEventLeaf) =>
    typeof leaf.reason === 'string' && reasons.includes(leaf.reason)
      ? undefined
      : `reason is not one of ${reasons.join(', ')}`;

/**
 * `moderation.suspended` (subject: the DID or remote entry id taken down) and `moderation.restored`
 * (subject: the one brought back), each with the reason's class. The reporter is never named.
 */
export const MODERATION_EVENT_KINDS: Readonly<Record<string, LogEventCheck>> = {
  'moderation.suspended': reasonIn(MODERATION_REASONS),
  'moderation.restored': reasonIn(RESTORATION_REASONS),
};

/** What a moderation leaf does to its subject, for followers that keep a copy of this registry's agents. */
export function moderationEffect(leaf: LogEventLeaf): 'suspended' | 'restored' | undefined {
  if (leaf.op === 'moderation.suspended') return 'suspended';
  if (leaf.op === 'moderation.restored') return 'restored';
  return undefined;
}
