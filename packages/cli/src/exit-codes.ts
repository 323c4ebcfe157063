/**
 * What the process exit code tells a script. Documented in packages/cli/README.md; never renumber.
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** The registry (or the invoked agent) refused or failed: an error answer, a failed or timed-out
   *  invocation, or a profile with problems (found locally by `validate`/`register`, or by the registry). */
  failed: 1,
  /** The command line or a local file is wrong: unknown option, bad JSON, missing profile or key. */
  usage: 2,
  /** The registry could not be reached (connection refused, DNS, TLS, no answer). */
  network: 3,
  /** Credentials are missing or no longer accepted: run `agent-registry register` or `login`; or an
   *  operator token (`federation`) is missing or not the registry's. */
  auth: 4,
  /** The registry's transparency log does not back what it served (`verify`, `mirror`): a bad checkpoint
   *  signature, a rewound, forked or rewritten log, a dropped entry, or a profile other than the logged one. */
  logMismatch: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports itself: a message for people, a code for scripts, and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly code: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string, code = 'USAGE', extra: Record<string, unknown> = {}) {
    super(message, EXIT.usage, code, extra);
  }
}

export class AuthRequiredError extends CliError {
  constructor(message: string, code = 'NOT_LOGGED_IN') {
    super(message, EXIT.auth, code);
  }
}
