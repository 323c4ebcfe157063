import {
  InvocationFailedError,
  InvocationTimeoutError,
  NetworkError,
  RegistryError,
  WebhookFailedError,
  type RegistryErrorInit,
} from '../errors.js';
import type { InvokeResponse, JsonObject, PendingTask, Task, TaskAck } from '../types.js';
import { enc, type Transport } from './transport.js';

export interface InvokeOptions {
  /** How long the registry waits for the agent (default 30000, at most 300000). */
  timeoutMs?: number;
  /**
   * Retrying with the same key attaches to the same task instead of creating a second one. Unset, one
   * is generated per call, so the client's own retries (network errors, 429, 503) never run the work twice.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export async function invokeRaw(
  transport: Transport,
  did: string,
  capability: string,
  input: JsonObject,
  options: InvokeOptions,
): Promise<InvokeResponse> {
  const body = {
    target_did: did,
    capability,
    input,
    ...(options.timeoutMs === undefined ? {} : { timeout_ms: options.timeoutMs }),
  };
  const idempotencyKey = options.idempotencyKey ?? globalThis.crypto.randomUUID();
  try {
    return await transport.request<InvokeResponse>('POST', '/api/invoke', {
      body,
      auth: true,
      signal: options.signal,
      headers: { 'idempotency-key': idempotencyKey },
    });
  } catch (error) {
    throw invocationError(error);
  }
}

export function getTask(transport: Transport, taskId: string): Promise<Task> {
  return transport.request('GET', `/api/tasks/${enc(taskId)}`, { auth: true });
}

export async function pollTasks(
  transport: Transport,
  options: { limit?: number; wait?: number; signal?: AbortSignal },
): Promise<PendingTask[]> {
  const response = await transport.request<{ tasks: PendingTask[] }>('GET', '/api/agent/tasks', {
    query: { limit: options.limit, wait: options.wait },
    auth: true,
    signal: options.signal,
    // The worker backs off and reconnects itself, and says so to its listeners.
    retries: 0,
  });
  return response.tasks;
}

export function reportWorkerStopped(
  transport: Transport,
): Promise<{ did: string; stopped_at: number | null }> {
  return transport.request('POST', '/api/agent/offline', { auth: true, body: {} });
}

export function acceptTask(transport: Transport, taskId: string): Promise<TaskAck> {
  return transport.request('POST', `/api/agent/tasks/${enc(taskId)}/accept`, { auth: true, body: {} });
}

export function completeTask(transport: Transport, taskId: string, output: JsonObject): Promise<TaskAck> {
  return transport.request('POST', `/api/agent/tasks/${enc(taskId)}/result`, {
    auth: true,
    body: { output },
  });
}

export function failTask(transport: Transport, taskId: string, error: string): Promise<TaskAck> {
  return transport.request('POST', `/api/agent/tasks/${enc(taskId)}/fail`, { auth: true, body: { error } });
}

/** An invocation's error answer as its typed error: 504 timed out, 502 the agent or its webhook failed. */
function invocationError(error: unknown): unknown {
  if (!(error instanceof RegistryError) || error instanceof NetworkError) return error;
  const init: RegistryErrorInit = {
    status: error.status,
    code: error.code,
    error: error.error,
    details: error.details,
    requestId: error.requestId,
    body: error.body,
    cause: error,
  };
  if (error.status === 504) return new InvocationTimeoutError(init);
  if (error.status === 502) {
    return error.code === 'WEBHOOK_FAILED' ? new WebhookFailedError(init) : new InvocationFailedError(init);
  }
  return error;
}
