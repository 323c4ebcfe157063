import assert from 'node:assert/strict';
import { agentPath, freePort, type Profile } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import { http } from './http.js';

export interface ListeningRegistry extends TestRegistry {
  url: string;
}

/** A registry listening on a real port, whose PUBLIC_URL is that port (cards point clients at it). */
export async function startListeningRegistry(env: Record<string, string> = {}): Promise<ListeningRegistry> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const registry = await startRegistry({ PUBLIC_URL: url, ...env });
  await registry.app.listen({ port, host: '127.0.0.1' });
  return { ...registry, url };
}

export interface QueueWorker extends Registered {
  /** Long-polls for one task, accepts it, and reports `answer(input)` (or fails it with a string). */
  serveOne(answer: (input: Record<string, unknown>) => Record<string, unknown> | string): Promise<string>;
}

/** An agent in queue mode whose worker talks to the registry over the REST queue endpoints. */
export async function queueWorker(
  registry: ListeningRegistry,
  profile: Profile,
  workerNode: { url: string } = registry,
): Promise<QueueWorker> {
  const registered = await register(registry, undefined, profile);
  const config = await http(registry, 'PUT', agentPath(registered.did, '/invocation'), registered.token, {
    enabled: true,
    delivery_mode: 'queue',
  });
  assert.equal(config.status, 200, JSON.stringify(config.body));
  return {
    ...registered,
    serveOne: async (answer) => {
      let tasks: { task_id: string; input: Record<string, unknown> }[] = [];
      while (tasks.length === 0) {
        const polled = await http(workerNode, 'GET', '/api/agent/tasks?wait=10', registered.token);
        assert.equal(polled.status, 200, JSON.stringify(polled.body));
        tasks = polled.body.tasks as typeof tasks;
      }
      const task = tasks[0]!;
      const accepted = await http(
        workerNode,
        'POST',
        `/api/agent/tasks/${task.task_id}/accept`,
        registered.token,
      );
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
      const result = answer(task.input);
      const reported =
        typeof result === 'string'
          ? await http(workerNode, 'POST', `/api/agent/tasks/${task.task_id}/fail`, registered.token, {
              error: result,
            })
          : await http(workerNode, 'POST', `/api/agent/tasks/${task.task_id}/result`, registered.token, {
              output: result,
            });
      assert.equal(reported.status, 200, JSON.stringify(reported.body));
      return task.task_id;
    },
  };
}
