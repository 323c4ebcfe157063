import {
  AgentCard as AgentCardCodec,
  type AgentCard,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type ListTaskPushNotificationConfigsResponse,
} from '@a2a-js/sdk';
import {
  A2AError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../kernel/errors.js';
import type { AuthenticatedAgent } from '../../modules/agents/authentication.js';
import type { AgentProfile } from '../../modules/agents/schemas.js';
import { requireDid } from '../../modules/identity/did-param.js';
import { textInputProperty } from '../capability-text.js';
import { classifyError, logClassified } from '../errors.js';
import { invokeThroughBroker, submitThroughBroker } from '../invocation.js';
import { a2aAgentCard } from './cards.js';
import { decodeListCursor, encodeListCursor, listFilters } from './list-tasks.js';
import {
  impliedCapability,
  inputOf,
  metadataValue,
  requireHistoryLength,
  type TextTarget,
} from './message-input.js';
import { completedTask, failedTask, historyOf, taskFromView } from './tasks.js';
import type { TaskView } from '../../modules/tasks/schemas.js';

/** What one HTTP request to an agent's A2A base carries: the agent, the verified caller, the connection. */
export interface A2ACall {
  rawDid: string;
  caller: AuthenticatedAgent;
  /** The client's address: invocations count input per address. */
  address: string;
  clientGone: AbortSignal;
  log: FastifyBaseLogger;
  requestId: string;
}

const unsupported = (what: string): never => {
  throw new UnsupportedOperationError(
    `${what} is not supported by this registry: use message/send (SendMessage), which answers with the ` +
      'finished task (or at once with configuration.returnImmediately), and tasks/get (GetTask)',
  );
};

/**
 * Registry errors in A2A terms (faces/errors.ts classifies them): caller mistakes are invalid params,
 * with the registry's code kept.
 */
export function toA2AError(error: unknown, call: Pick<A2ACall, 'log' | 'requestId'>): A2AError {
  if (error instanceof A2AError) return error;
  const classified = classifyError(error, { requestId: call.requestId });
  logClassified(call.log, classified, 'A2A request failed');
  const { code, status } = classified;
  const message = `${code}: ${classified.details}`;
  // The SDK would put an unknown error's message on the wire; the classification names none of it.
  if (classified.kind === 'internal') return new A2AError({ message, metadata: { code } });
  const metadata = { code, http_status: String(status) };
  if (code === 'TASK_NOT_FOUND' || code === 'NOT_TASK_CREATOR') {
    return new TaskNotFoundError({ message, metadata });
  }
  if (status >= 400 && status < 500) return new RequestMalformedError({ message, metadata });
  return new A2AError({ message, metadata });
}

/**
 * An agent's A2A face over the invocation broker: SendMessage runs one invocation and answers with the
 * finished task (or, with returnImmediately, the task as created); GetTask reads it back from the tasks table. The SDK's JSON-RPC transport handler
 * does the framing; this class only maps.
 */
export class AgentA2AHandler implements A2ARequestHandler {
  constructor(
    private readonly ctx: AppContext,
    private readonly call: A2ACall,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    const profile = await this.ctx.agents.getProfile(this.call.rawDid);
    return AgentCardCodec.fromJSON(a2aAgentCard(profile, this.ctx.config.identity.publicUrl));
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    // A2A v1.0 section 3.3.4: a card without `extendedAgentCard: true` answers UnsupportedOperationError
    // (ExtendedAgentCardNotConfiguredError is for an agent that declares one and has none).
    throw new UnsupportedOperationError(
      'UNSUPPORTED_OPERATION: there is no extended card (the card says extendedAgentCard: false); the public card is complete',
    );
  }

  async sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    try {
      const message = params.message;
      if (message === undefined)
        throw new RequestMalformedError('INVALID_MESSAGE: params.message is required');
      if (message.messageId === '') {
        throw new RequestMalformedError(
          'INVALID_MESSAGE: message.messageId is required (a unique id you choose)',
        );
      }
      // Every task here ends within its SendMessage: a message naming one cannot continue it.
      if (message.taskId !== '') await this.refuseFollowUp(message.taskId);
      const historyLength = params.configuration?.historyLength;
      requireHistoryLength(historyLength);
      // A push config would never be used: refused as the push methods are (section 3.3.4), not ignored.
      if (params.configuration?.taskPushNotificationConfig !== undefined) throw pushUnsupported();
      const capability =
        metadataValue(message.metadata, 'capability') ?? metadataValue(params.metadata, 'capability');
      const timeout =
        metadataValue(message.metadata, 'timeout_ms') ?? metadataValue(params.metadata, 'timeout_ms');
      // The profile is read only when the message needs it (no capability named, or a text part).
      let profile: AgentProfile | undefined;
      const readProfile = async () => (profile ??= await this.ctx.agents.getProfile(this.call.rawDid));
      const named = capability ?? impliedCapability(await readProfile());
      const textTarget = async (): Promise<TextTarget> => {
        const offered = (await readProfile()).capabilities.find((candidate) => candidate.type === named);
        if (offered === undefined) return { offered: false };
        return { offered: true, capability: offered.type, property: textInputProperty(offered) };
      };
      const request = {
        target_did: this.call.rawDid,
        capability: named,
        input: await inputOf(message, textTarget),
        ...(timeout === undefined ? {} : { timeout_ms: timeout }),
      };
      const facts = (taskId: string) => ({
        taskId,
        capability: String(request.capability),
        targetDid: this.targetDid(),
        at: this.ctx.clock.now(),
      });
      const history = (taskId: string) => ({ history: historyOf(taskId, request.input, historyLength) });
      if (params.configuration?.returnImmediately === true) {
        // A2A v1.0 section 3.2.2: the task as created; GetTask and ListTasks show it move.
        const submitted = await submitThroughBroker(this.ctx, this.call.caller, request, this.call.address);
        if (!submitted.ok)
          return {
            ...failedTask(facts(submitted.taskId), submitted.code, submitted.reason),
            ...history(submitted.taskId),
          };
        return { ...taskFromView(submitted.task), ...history(submitted.task.task_id) };
      }
      const outcome = await invokeThroughBroker(
        this.ctx,
        this.call.caller,
        request,
        this.call.clientGone,
        this.call.address,
      );
      if (!outcome.ok) {
        return {
          ...failedTask(facts(outcome.taskId), outcome.code, outcome.reason, outcome.offlineSince),
          ...history(outcome.taskId),
        };
      }
      const taskId = outcome.result.task_id;
      return { ...completedTask(facts(taskId), outcome.result), ...history(taskId) };
    } catch (error) {
      throw toA2AError(error, this.call);
    }
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    requireHistoryLength(params.historyLength);
    const task = taskFromView(await this.ownTaskView(params.id));
    if (params.historyLength === 0) return task;
    try {
      const input = await this.ctx.invocation.getTaskInput(this.call.caller, params.id);
      return input === undefined
        ? task
        : { ...task, history: historyOf(task.id, input, params.historyLength) };
    } catch (error) {
      throw toA2AError(error, this.call);
    }
  }

  /** A task of this caller at this agent's base, or TaskNotFound. */
  private async ownTaskView(taskId: string): Promise<TaskView> {
    // An unknown id, another caller's task and a task of another agent get one answer, word for word,
    // so that task ids of others cannot be probed (docs/a2a.md).
    const notFound = (): TaskNotFoundError =>
      new TaskNotFoundError({
        message: `TASK_NOT_FOUND: You created no task ${taskId} for ${this.targetDid()}`,
        metadata: { code: 'TASK_NOT_FOUND', http_status: '404' },
      });
    try {
      const view = await this.ctx.invocation.getTask(this.call.caller, taskId);
      // Tasks are read at the base of the agent they went to; another agent's base does not know them.
      if (view.target_did !== this.targetDid()) throw notFound();
      return view;
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'TASK_NOT_FOUND' || error.code === 'NOT_TASK_CREATOR'))
        throw notFound();
      throw toA2AError(error, this.call);
    }
  }

  // eslint-disable-next-line require-yield
  async *sendMessageStream(): AsyncGenerator<StreamResponse, void, undefined> {
    unsupported('Streaming (SendStreamingMessage, message/stream)');
  }

  // eslint-disable-next-line require-yield
  async *resubscribe(): AsyncGenerator<StreamResponse, void, undefined> {
    unsupported('Subscribing to a task (SubscribeToTask, tasks/resubscribe)');
  }

  /**
   * The broker has no cancel move (docs/decisions/mcp-a2a.md, "A2A CancelTask: no task is cancelable"): an
   * unknown task is TaskNotFound, every other TaskNotCancelable.
   */
  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const view = await this.ownTaskView(params.id);
    const ended = view.status !== 'pending' && view.status !== 'processing';
    throw new TaskNotCancelableError({
      message:
        `TASK_NOT_CANCELABLE: task ${view.task_id} ${ended ? `has ended (${view.status})` : 'is open'}; ` +
        'the registry cannot cancel a task: it ends when the agent answers or at its deadline',
      metadata: { code: 'TASK_NOT_CANCELABLE' },
    });
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    try {
      requireHistoryLength(params.historyLength);
      const filters = listFilters(params);
      const after = decodeListCursor(params.pageToken);
      // History is the default of GetTask, but here only on request: it is a task's whole input.
      const withHistory = params.historyLength !== undefined && params.historyLength > 0;
      const { tasks, total, inputs } = await this.ctx.invocation.listTasks(
        this.call.caller,
        {
          targetDid: this.targetDid(),
          ...filters.query,
          ...(after === undefined ? {} : { after }),
          limit: filters.pageSize + 1,
        },
        { withInputs: withHistory },
      );
      const page = tasks.slice(0, filters.pageSize);
      const last = page.at(-1);
      return {
        tasks: page.map((view) => {
          const input = inputs.get(view.task_id);
          const task = {
            ...taskFromView(view),
            history: input === undefined ? [] : historyOf(view.task_id, input, params.historyLength),
          };
          return params.includeArtifacts === true ? task : { ...task, artifacts: [] };
        }),
        nextPageToken: tasks.length > filters.pageSize && last !== undefined ? encodeListCursor(last) : '',
        // "The page size used for this response": how many tasks it holds (the A2A kit reads it so).
        pageSize: page.length,
        totalSize: total,
      };
    } catch (error) {
      throw toA2AError(error, this.call);
    }
  }

  async createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw pushUnsupported();
  }

  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw pushUnsupported();
  }

  async listTaskPushNotificationConfigs(): Promise<ListTaskPushNotificationConfigsResponse> {
    throw pushUnsupported();
  }

  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw pushUnsupported();
  }

  /** A2A v1.0 section 3.1.1: a message naming a task must name one of yours, and one that can continue. */
  private async refuseFollowUp(taskId: string): Promise<never> {
    const view = await this.ownTaskView(taskId);
    const ended = view.status !== 'pending' && view.status !== 'processing';
    throw new UnsupportedOperationError({
      message:
        `TASK_NOT_CONTINUABLE: task ${view.task_id} ${ended ? `has ended (${view.status})` : 'is still open'} ` +
        'and takes no further messages: each task here is one invocation; send the message without taskId ' +
        'to start a new one',
      metadata: { code: 'TASK_NOT_CONTINUABLE' },
    });
  }

  private targetDid(): string {
    return requireDid(this.call.rawDid, this.ctx.config.identity.didWebDomain).did;
  }
}

const pushUnsupported = (): PushNotificationNotSupportedError =>
  new PushNotificationNotSupportedError(
    'PUSH_NOT_SUPPORTED: push notifications are not supported (the card says pushNotifications: false); ' +
      'message/send answers with the finished task, or poll tasks/get (GetTask)',
  );
