/**
 * A leaf that logs an event about an agent or a remote entry rather than a profile (docs/transparency-log.md,
 * "Event leaves"): its kind in `op`, what it is about in `subject`, when in `time`, then the kind's own
 * scalar fields.
 */
export interface LogEventLeaf {
  v: number;
  seq: number;
  op: string;
  /** A DID or a remote entry id. */
  subject: string;
  /** When the event happened (milliseconds since the epoch). */
  time: number;
  [field: string]: string | number | boolean | null;
}

/** What a kind requires of its own fields: the problem with `leaf`, or undefined when it is well formed. */
export type LogEventCheck = (leaf: LogEventLeaf) => string | undefined;
