import {
  InvocationFailedError,
  InvocationTimeoutError,
  NetworkError,
  RegistryError,
  WebhookFailedError,
} from '@agent-registry/sdk';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

export interface Failure {
  message: string;
  exitCode: ExitCode;
  /** The `error` member of the `--json` output. */
  body: Record<string, unknown>;
}

function taskIdOf(error: RegistryError): string | undefined {
  if (
    error instanceof InvocationTimeoutError ||
    error instanceof InvocationFailedError ||
    error instanceof WebhookFailedError
  ) {
    return error.taskId;
  }
  return undefined;
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
  if (error instanceof NetworkError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return {
      message: `cannot reach the registry (${error.message}${cause}). Is it running? Check --registry / AGENT_REGISTRY_URL.`,
      exitCode: EXIT.network,
      body: { code: 'NETWORK_ERROR', message: error.message },
    };
  }
  if (error instanceof RegistryError) {
    const taskId = taskIdOf(error);
    const where = [
      `${error.code}`,
      `HTTP ${error.status}`,
      error.requestId ? `request ${error.requestId}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const hint =
      error.status === 401 ? '\nhint: run `agent-registry login` (or `register` if this agent is new)' : '';
    return {
      message: `${error.details || error.message} (${where})${taskId ? `\ntask: ${taskId}` : ''}${hint}`,
      exitCode: error.status === 401 ? EXIT.auth : EXIT.failed,
      body: {
        code: error.code,
        status: error.status,
        message: error.message,
        details: error.details,
        request_id: error.requestId ?? null,
        ...(taskId ? { task_id: taskId } : {}),
      },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message, exitCode: EXIT.failed, body: { code: 'INTERNAL', message } };
}
