import { canonicalJson } from './canonical-json.js';
import type { LogEventCheck, LogEventLeaf } from './log-event-types.js';

/** Event kinds of the operator's moderation decisions (docs/transparency-log.md, "Event kinds"). */

import { MODERATION_REASONS, RESTORATION_REASONS } from './limits.js';

export {
  MODERATION_REASONS,
  RESTORATION_REASONS,
  type ModerationReason,
  type RestorationReason,
} from './limits.js';

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

export const MODERATION_APPEAL_PURPOSE = 'moderation-appeal';

/** What a suspended agent signs to appeal (docs/signing.md): its token is refused, its key is not. */
export interface AppealInput {
  did: string;
  /** The registry's origin, e.g. `https://registry.example`. */
  audience: string;
  /** The `seq` of the suspension appealed (GET /api/moderation). */
  decision: number;
  /** The agent's statement, read by the operator. */
  statement: string;
  /** Epoch milliseconds. */
  timestamp: number;
}

/** The canonical JSON (RFC 8785) an appeal's signature covers, signed as key messages are. */
export function appealMessage(input: AppealInput): string {
  return canonicalJson({
    audience: input.audience,
    decision: input.decision,
    did: input.did,
    purpose: MODERATION_APPEAL_PURPOSE,
    statement: input.statement,
    timestamp: input.timestamp,
  });
}
