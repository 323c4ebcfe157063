import {
  InvocationFailedError,
  InvocationTimeoutError,
  LogVerificationError,
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

/**
 * The registry's messages speak HTTP; CLI users act through commands. Each route a message may name,
 * as the command that does the same.
 */
const ROUTE_AS_COMMAND: [RegExp, string][] = [
  [/PUT \/api\/reviews\/\{review_id\}/g, '`agent-registry review <did> --rating <rating> --edit`'],
  [/POST \/api\/auth\/token/g, '`agent-registry login`'],
  [/GET \/api\/tasks\/\{id\}/g, '`agent-registry tasks get <task-id>`'],
];

/** The registry's pointer to agents online now with a capability, as the search command. */
const ONLINE_SEARCH = /GET \/api\/agents\/search\?capability=([^&\s]+)&available=true \(MCP: [^)]*\)/g;

const inCliWords = (text: string): string =>
  ROUTE_AS_COMMAND.reduce((result, [route, command]) => result.replace(route, command), text).replace(
    ONLINE_SEARCH,
    (_match, capability: string) =>
      `\`agent-registry search --capability ${decodeURIComponent(capability)} --available\``,
  );

/** What to run next, for the refusals a CLI user can act on. */
function nextStep(error: RegistryError, taskId: string | undefined): string | undefined {
  if (error.status === 401) return 'run `agent-registry login` (or `register` if this agent is new)';
  switch (error.code) {
    case 'PUBLIC_KEY_EXISTS':
      return 'this key is already registered here: run `agent-registry login` for a token (`agent-registry init --force` starts a new agent, keeping the old key as .bak)';
    case 'REVIEW_EXISTS':
      return 'change your review with `agent-registry review <did> --rating <rating> --edit` (within 10 minutes of writing it)';
    case 'INVOCATION_TIMEOUT':
      if (error instanceof InvocationTimeoutError && error.offlineSince !== undefined) {
        return 'the agent is offline and the task was never sent, so no answer will come: call an agent that is online now (the search above lists them), or this one once `agent-registry show <did>` reads online';
      }
      return taskId
        ? `the agent may still answer: \`agent-registry tasks get ${taskId}\` shows the task's status and output; \`--timeout <ms>\` waits longer next time`
        : 'retry with a longer `--timeout <ms>`';
    default:
      return undefined;
  }
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
  if (error instanceof LogVerificationError) {
    return {
      message: `the transparency log does not back what the registry served: ${error.message}`,
      exitCode: EXIT.logMismatch,
      body: { code: 'LOG_VERIFICATION_FAILED', message: error.message },
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
    const hint = nextStep(error, taskId);
    return {
      message: `${inCliWords(error.details || error.message)} (${where})${taskId ? `\ntask: ${taskId}` : ''}${hint ? `\nhint: ${hint}` : ''}`,
      exitCode: error.status === 401 ? EXIT.auth : EXIT.failed,
      body: {
        code: error.code,
        status: error.status,
        message: error.message,
        details: error.details,
        request_id: error.requestId ?? null,
        ...(taskId ? { task_id: taskId } : {}),
        ...(error instanceof InvocationTimeoutError && error.offlineSince !== undefined
          ? { offline_since: error.offlineSince }
          : {}),
        ...(hint ? { hint } : {}),
      },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message, exitCode: EXIT.failed, body: { code: 'INTERNAL', message } };
}
