import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentPath } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { http } from './http.js';
import { startListeningRegistry, type ListeningRegistry } from './faces-helpers.js';

/** What the A2A compatibility kit is pointed at: an echo agent's base and a caller's token. */
export interface KitTarget {
  registry: ListeningRegistry;
  caller: Registered;
  echo: Registered;
  /** The echo agent's A2A base, without the trailing slash. */
  base: string;
  /**
   * A server whose root is the base: the kit looks for the card at its target's root only
   * (`/.well-known/agent-card.json`). Its card names the proxy for JSON-RPC (so its signature no longer
   * verifies); with `addToken`, it adds the caller's token to requests without one (the kit's 1.0 rewrite
   * sends none; the 410ba92 kit sends its own and checks that a request without one is refused).
   */
  root: string;
  /** Stops the worker, then the registry. */
  close(): Promise<void>;
}

/**
 * A registry with an echo agent whose one capability takes `{"text": string}` (so plain text parts are
 * accepted), served from the queue by a worker that accepts each task at once and answers `{text}`
 * after `holdMs`, so a client that returned at once sees the task working before it completes.
 */
export async function startKitTarget({ holdMs = 1000, addToken = false } = {}): Promise<KitTarget> {
  const registry = await startListeningRegistry();
  // The kit compares task times with its own clock (statusTimestampAfter): the registry's follows real time.
  const ticking = setInterval(() => registry.clock.advance(Date.now() - registry.clock.now()), 5);
  const caller = await register(registry);
  const echo = await register(registry, undefined, {
    name: 'Echo',
    description: 'Answers the text it is sent',
    capabilities: [
      {
        type: 'echo',
        description: 'Echoes the text',
        input_schema: {
          type: 'object',
          required: ['text'],
          properties: { text: { type: 'string' } },
        },
      },
    ],
  });
  const config = await http(registry, 'PUT', agentPath(echo.did, '/invocation'), echo.token, {
    enabled: true,
    delivery_mode: 'queue',
  });
  assert.equal(config.status, 200, JSON.stringify(config.body));

  const stopping = new AbortController();
  const answering = new Set<Promise<unknown>>();
  const answer = async (task: { task_id: string; input: Record<string, unknown> }) => {
    const path = `/api/agent/tasks/${task.task_id}`;
    if ((await http(registry, 'POST', `${path}/accept`, echo.token)).status !== 200) return;
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    await http(registry, 'POST', `${path}/result`, echo.token, { output: { text: task.input.text } });
  };
  const worker = (async () => {
    while (!stopping.signal.aborted) {
      const polled = await http(registry, 'GET', '/api/agent/tasks?wait=1', echo.token).catch(
        () => undefined,
      );
      const tasks = (polled?.body.tasks ?? []) as { task_id: string; input: Record<string, unknown> }[];
      for (const task of tasks) {
        const answered = answer(task).catch(() => undefined);
        answering.add(answered);
        void answered.finally(() => answering.delete(answered));
      }
    }
  })();
  const proxy = await rootProxy(
    `${registry.url}/a2a/${encodeURIComponent(echo.did)}`,
    addToken ? caller.token : undefined,
  );
  return {
    registry,
    caller,
    echo,
    base: `${registry.url}/a2a/${encodeURIComponent(echo.did)}`,
    root: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise((resolve) => proxy.close(resolve));
      stopping.abort();
      await worker;
      await Promise.all(answering);
      clearInterval(ticking);
      await registry.close();
    },
  };
}

/** Forwards every request to `base` + its path, with its method, headers and body. */
async function rootProxy(base: string, token: string | undefined): Promise<Server> {
  let root = '';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && name !== 'host' && name !== 'content-length')
          headers.set(name, value);
      }
      if (token !== undefined && !headers.has('authorization'))
        headers.set('authorization', `Bearer ${token}`);
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
      fetch(`${base}${request.url ?? '/'}`, { method: request.method, headers, body })
        .then(async (answer) => {
          response.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
          });
          const body = await answer.text();
          response.end(request.url?.endsWith('agent-card.json') ? body.replaceAll(`${base}/`, root) : body);
        })
        .catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return server;
}
