import { CliError, EXIT, type ExitCode } from './exit-codes.js';

export interface Failure {
  message: string;
  exitCode: ExitCode;
  /** The `error` member of the `--json` output. */
  body: Record<string, unknown>;
}

/** Turns anything a command threw into what is printed and the exit code. */
export function describeFailure(error: unknown): Failure {
  if (error instanceof CliError) {
    return {
      message: error.message,
      exitCode: error.exitCode,
      body: { code: error.code, message: error.message, ...error.extra },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message, exitCode: EXIT.failed, body: { code: 'INTERNAL', message } };
}
