import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostResolver } from '../../src/kernel/network-policy.js';
import { type TestDatabase, agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

// ---------------------------------------------------------------------------------------------------------
// A real HTTP server on 127.0.0.1 standing in for an agent's webhook. Only these loopback servers of our
// own are ever contacted by the registry in the tests that use it.
// ---------------------------------------------------------------------------------------------------------

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
}

export type Handler = (received: Received, res: http.ServerResponse) => void;

export interface HookServer {
  port: number;
  url(pathname?: string): string;
  received: Received[];
  /** Resolves with the next request this server receives (already recorded in `received`). */
  nextRequest(): Promise<Received>;
  close(): Promise<void>;
}

export async function startHook(
  handler: Handler = (_, res) => res.writeHead(500).end(),
): Promise<HookServer> {
  const received: Received[] = [];
  const waiting: ((request: Received) => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        raw: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      for (const resolve of waiting.splice(0)) resolve(request);
      handler(request, res);
    });
  });
  // A response the registry cut off (size limit, deadline) must not crash the test process.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (pathname = '/hook') => `http://127.0.0.1:${port}${pathname}`,
    received,
    nextRequest: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error === undefined ? resolve() : reject(error))),
      );
    },
  };
}

/** A port on 127.0.0.1 where nothing listens: open a server, note its port, close it. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export const json = (res: http.ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

/** node:http headers as the string record `standardwebhooks` expects. */
export const stringHeaders = (headers: http.IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );

export const whsecSecret = (): string => `whsec_${crypto.randomBytes(32).toString('base64')}`;

// ---------------------------------------------------------------------------------------------------------
// Registries built the way the testkit's startRegistry builds them, but with injectable DNS and a reusable file.
// ---------------------------------------------------------------------------------------------------------

export const openRegistry = (
  database: TestDatabase,
  env: Record<string, string> = {},
  resolveHost?: HostResolver,
) => startRegistry(env, resolveHost === undefined ? { database } : { database, resolveHost });

// ---------------------------------------------------------------------------------------------------------
// Registry helpers
// ---------------------------------------------------------------------------------------------------------

export interface InjectResponse {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
  json<T = Record<string, unknown>>(): T;
}

export const configure = (
  registry: TestRegistry,
  agent: Registered,
  payload: Record<string, unknown>,
): Promise<InjectResponse> =>
  registry.app.inject({
    method: 'PUT',
    url: agentPath(agent.did, '/invocation'),
    headers: bearer(agent.token),
    payload,
  });

/** Registers an agent and points its webhook at `url`. */
export async function webhookAgent(
  registry: TestRegistry,
  url: string,
  secret = whsecSecret(),
): Promise<Registered> {
  const target = await register(registry);
  const response = await configure(registry, target, {
    enabled: true,
    delivery_mode: 'webhook',
    webhook_url: url,
    webhook_secret: secret,
  });
  assert.equal(response.statusCode, 200, response.body);
  return target;
}

export const invoke = (
  registry: TestRegistry,
  caller: Registered,
  target: Registered,
  input: Record<string, unknown> = { text: 'hello' },
  timeoutMs = 10_000,
): Promise<InjectResponse> =>
  registry.app.inject({
    method: 'POST',
    url: '/api/invoke',
    headers: bearer(caller.token),
    payload: { target_did: target.did, capability: 'translation', input, timeout_ms: timeoutMs },
  });

export const getTask = (
  registry: TestRegistry,
  caller: Registered,
  taskId: string,
): Promise<InjectResponse> =>
  registry.app.inject({ method: 'GET', url: `/api/tasks/${taskId}`, headers: bearer(caller.token) });

/** Waits until the registry has recorded the webhook's 202 (accepts are not announced to waiters). */
export async function untilProcessing(
  registry: TestRegistry,
  caller: Registered,
  taskId: string,
): Promise<void> {
  for (;;) {
    const task = await getTask(registry, caller, taskId);
    const status = task.json().status;
    if (status === 'processing') return;
    assert.equal(status, 'pending', task.body);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const report = (
  registry: TestRegistry,
  agent: Registered,
  taskId: string,
  verb: 'result' | 'fail',
  payload: Record<string, unknown>,
): Promise<InjectResponse> =>
  registry.app.inject({
    method: 'POST',
    url: `/api/agent/tasks/${taskId}/${verb}`,
    headers: bearer(agent.token),
    payload,
  });

/** Every error is JSON {error, details, code}; a failed invocation (502/504) also names its task. */
export function assertError(response: InjectResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = response.json();
  assert.equal(typeof body.error, 'string', response.body);
  assert.equal(typeof body.details, 'string', response.body);
  assert.equal(body.code, code, response.body);
  if (status === 502 || status === 504) assert.equal(typeof body.task_id, 'string', response.body);
  return body;
}

/** A failed invocation: 502 WEBHOOK_FAILED, and the task reads as failed with the same reason. */
export async function assertWebhookFailed(
  registry: TestRegistry,
  caller: Registered,
  response: InjectResponse,
  details: RegExp,
): Promise<string> {
  const body = assertError(response, 502, 'WEBHOOK_FAILED');
  assert.match(String(body.details), details);
  const task = await getTask(registry, caller, String(body.task_id));
  assert.equal(task.statusCode, 200, task.body);
  assert.equal(task.json().status, 'failed');
  assert.match(String(task.json().error), details);
  assert.equal(typeof task.json().completed_at, 'number');
  return String(body.task_id);
}
