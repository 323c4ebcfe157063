import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  createTestDatabase,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  testDatabase,
  type TestDatabase,
  TEST_PUBLIC_URL,
  startRegistryProcess,
  type RegistryProcess as Node,
  privateClusterUnavailable,
  startPrivateCluster,
  type PrivateCluster,
} from '@agent-registry/testkit';
import { http } from '../support/http.js';

async function registerOn(
  node: Node,
  capabilities = [{ type: 'echo' }],
): Promise<{ did: string; token: string }> {
  const agent = ed25519Agent();
  const response = await http(
    node,
    'POST',
    '/api/agents/register',
    undefined,
    await registrationBody(agent, { ...defaultProfile(), capabilities }, Date.now()),
  );
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as { did: string; token: string };
}

const postgresOnly =
  testDatabase === 'postgres'
    ? false
    : 'several nodes share one database only on PostgreSQL (the postgres pass runs this)';

describe('several registry processes on one PostgreSQL are one registry', { skip: postgresOnly }, () => {
  let database: TestDatabase;
  let a: Node;
  let b: Node;
  let caller: { did: string; token: string };
  let worker: { did: string; token: string };

  before(async () => {
    database = await createTestDatabase();
    [a, b] = await Promise.all([
      startRegistryProcess({
        DATABASE_URL: database.url,
        PUBLIC_URL: TEST_PUBLIC_URL,
        REVIEW_RATE_LIMIT: '3',
      }),
      startRegistryProcess({
        DATABASE_URL: database.url,
        PUBLIC_URL: TEST_PUBLIC_URL,
        REVIEW_RATE_LIMIT: '3',
      }),
    ]);
    caller = await registerOn(a);
    worker = await registerOn(b);
    const config = await http(
      a,
      'PUT',
      `/api/agents/${encodeURIComponent(worker.did)}/invocation`,
      worker.token,
      { enabled: true, delivery_mode: 'queue' },
    );
    assert.equal(config.status, 200);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  test('a token issued by one node works on the other (shared signing key)', async () => {
    const response = await http(b, 'PUT', `/api/agents/${encodeURIComponent(caller.did)}`, caller.token, {
      name: 'Renamed on B',
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(
      (await http(a, 'GET', `/api/agents/${encodeURIComponent(caller.did)}`)).body.name,
      'Renamed on B',
    );
  });

  test('a worker polling node B makes its agent online for a reader of node A', async () => {
    const profileOnA = async () =>
      (await http(a, 'GET', `/api/agents/${encodeURIComponent(worker.did)}`)).body.availability as {
        status: string;
        last_seen_at: number | null;
      };
    const before = await profileOnA();
    // Earlier tests may have polled already; what matters is that this poll on B shows on A.
    const polledAfter = Date.now();
    assert.equal((await http(b, 'GET', '/api/agent/tasks', worker.token)).status, 200);
    const after = await profileOnA();
    assert.equal(after.status, 'online');
    assert.ok(
      after.last_seen_at !== null &&
        after.last_seen_at >= Math.min(polledAfter, before.last_seen_at ?? polledAfter),
    );
    // The caller never polled: nothing is invented for it on either node.
    const callerOnB = await http(b, 'GET', `/api/agents/${encodeURIComponent(caller.did)}`);
    assert.equal((callerOnB.body.availability as { status: string }).status, 'unknown');
  });

  // The long poll's wait and the invocation's deadline are far beyond the tests' own time limit: only
  // the nodes' announcements (the new task from A, the result from B) can end them in time. A wait or
  // a deadline running out would end them too, with the same answers, and the tests would still pass.
  const CROSS_NODE_TEST = { timeout: 30_000 };

  /** Starts `invoke` (through node A) while the worker long-polls node B; the task B's poll got. */
  async function taskSeenOnB<T>(
    invoke: () => Promise<T>,
  ): Promise<{ task: { task_id: string; input: unknown }; invocation: Promise<T> }> {
    const poll = http(b, 'GET', '/api/agent/tasks?wait=60', worker.token);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const invocation = invoke();
    const tasks = (await poll).body.tasks as { task_id: string; input: unknown }[];
    assert.equal(tasks.length, 1, 'the long poll on B woke for the task created on A');
    return { task: tasks[0]!, invocation };
  }

  /** The worker accepts the task and reports `output`, both through node B. */
  async function finishOnB(taskId: string, output: Record<string, unknown>): Promise<void> {
    assert.equal((await http(b, 'POST', `/api/agent/tasks/${taskId}/accept`, worker.token)).status, 200);
    assert.equal(
      (await http(b, 'POST', `/api/agent/tasks/${taskId}/result`, worker.token, { output })).status,
      200,
    );
  }

  test(
    'an invocation blocked on node A completes when the worker reports through node B',
    CROSS_NODE_TEST,
    async () => {
      const { task, invocation } = await taskSeenOnB(() =>
        http(a, 'POST', '/api/invoke', caller.token, {
          target_did: worker.did,
          capability: 'echo',
          input: { n: 1 },
          timeout_ms: 300_000,
        }),
      );
      await finishOnB(task.task_id, { via: 'B' });
      const response = await invocation;
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.output, { via: 'B' });
    },
  );

  test(
    'an MCP invoke_agent on node A completes when the worker reports through node B',
    CROSS_NODE_TEST,
    async () => {
      const client = new Client({ name: 'cross-node', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${caller.token}` } },
        }),
      );
      try {
        const { task, invocation } = await taskSeenOnB(() =>
          client.callTool({
            name: 'invoke_agent',
            arguments: {
              target_did: worker.did,
              capability: 'echo',
              input: { via: 'mcp' },
              timeout_ms: 300_000,
            },
          }),
        );
        assert.deepEqual(task.input, { via: 'mcp' });
        const id = task.task_id;
        await finishOnB(id, { echoed: 'B' });
        const result = await invocation;
        assert.equal(result.isError, undefined, JSON.stringify(result.content));
        assert.deepEqual(result.structuredContent, {
          task_id: id,
          status: 'completed',
          output: { echoed: 'B' },
        });
      } finally {
        await client.close();
      }
    },
  );

  test('A2A: a message sent through node A is answered via node B and read back with GetTask on B', async () => {
    const path = `/a2a/${encodeURIComponent(worker.did)}/`;
    // Both nodes serve one registry (one PUBLIC_URL); the test points the official client at each node.
    const clientOn = async (node: Node) => {
      const card = (await (await fetch(`${node.url}${path}.well-known/agent-card.json`)).json()) as {
        supportedInterfaces: { url: string }[];
      };
      for (const entry of card.supportedInterfaces) entry.url = `${node.url}${path}`;
      return new ClientFactory().createFromAgentCard(card as never);
    };
    const auth = { serviceParameters: { authorization: `Bearer ${caller.token}` } };
    const poll = http(b, 'GET', '/api/agent/tasks?wait=20', worker.token);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = (await clientOn(a)).sendMessage(
      {
        tenant: '',
        message: {
          messageId: 'cross-node',
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [
            { content: { $case: 'data', value: { n: 2 } }, metadata: undefined, filename: '', mediaType: '' },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      },
      auth,
    );
    const id = ((await poll).body.tasks as { task_id: string }[])[0]!.task_id;
    await http(b, 'POST', `/api/agent/tasks/${id}/accept`, worker.token);
    await http(b, 'POST', `/api/agent/tasks/${id}/result`, worker.token, { output: { via: 'B' } });
    const task = (await sent) as Task;
    assert.equal(task.id, id);
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    const read = await (await clientOn(b)).getTask({ tenant: '', id }, auth);
    assert.equal(read.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(read.artifacts[0]?.parts[0]?.content, { $case: 'data', value: { via: 'B' } });
  });

  test('two accepts through two nodes never both win', async () => {
    for (let round = 0; round < 5; round++) {
      const invocation = http(a, 'POST', '/api/invoke', caller.token, {
        target_did: worker.did,
        capability: 'echo',
        input: { round },
        timeout_ms: 20_000,
      });
      let tasks: { task_id: string }[] = [];
      while (tasks.length === 0)
        tasks = (await http(a, 'GET', '/api/agent/tasks?wait=5', worker.token)).body.tasks as {
          task_id: string;
        }[];
      const id = tasks[0]!.task_id;
      const [onA, onB] = await Promise.all([
        http(a, 'POST', `/api/agent/tasks/${id}/accept`, worker.token),
        http(b, 'POST', `/api/agent/tasks/${id}/accept`, worker.token),
      ]);
      assert.deepEqual([onA.status, onB.status].sort(), [200, 409]);
      await http(b, 'POST', `/api/agent/tasks/${id}/result`, worker.token, { output: { round } });
      assert.equal((await invocation).status, 200);
    }
  });

  test('one review per reviewer per agent holds when two nodes race', async () => {
    const reviewer = await registerOn(a);
    const target = await registerOn(b);
    const body = { target_did: target.did, rating: 8.5, comment: 'raced' };
    const [onA, onB] = await Promise.all([
      http(a, 'POST', '/api/reviews', reviewer.token, body),
      http(b, 'POST', '/api/reviews', reviewer.token, body),
    ]);
    assert.deepEqual([onA.status, onB.status].sort(), [201, 409]);
    const reviews = await http(a, 'GET', `/api/agents/${encodeURIComponent(target.did)}/reviews`);
    assert.equal(reviews.body.total, 1);
    assert.equal(
      (await http(b, 'GET', `/api/agents/${encodeURIComponent(target.did)}`)).body.total_reviews,
      1,
    );
  });

  test('the review rate limit counts reviews made through every node', async () => {
    const reviewer = await registerOn(a);
    const targets = await Promise.all([registerOn(a), registerOn(b), registerOn(a), registerOn(b)]);
    const statuses: number[] = [];
    for (const [index, target] of targets.entries()) {
      const node = index % 2 === 0 ? a : b;
      const response = await http(node, 'POST', '/api/reviews', reviewer.token, {
        target_did: target.did,
        rating: 7,
      });
      statuses.push(response.status);
      if (response.status === 429) assert.equal(response.body.code, 'REVIEW_RATE_LIMITED');
    }
    assert.deepEqual(statuses, [201, 201, 201, 429], 'REVIEW_RATE_LIMIT=3 on both nodes, one shared count');
  });
});

const privateCluster =
  testDatabase === 'postgres'
    ? privateClusterUnavailable()
    : 'restarting PostgreSQL (the postgres pass runs this)';

// On a PostgreSQL cluster of the test's own, so that stopping it disturbs no other test or developer.
describe('two registry nodes across a PostgreSQL restart', { skip: privateCluster ?? false }, () => {
  let cluster: PrivateCluster;
  let a: Node;
  let b: Node;

  before(async () => {
    cluster = await startPrivateCluster();
    await cluster.query('create database registry');
    [a, b] = await Promise.all([
      startRegistryProcess({ DATABASE_URL: cluster.url('registry'), PUBLIC_URL: TEST_PUBLIC_URL }),
      startRegistryProcess({ DATABASE_URL: cluster.url('registry'), PUBLIC_URL: TEST_PUBLIC_URL }),
    ]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    cluster?.destroy();
  });

  test('requests meanwhile get a JSON 503, the service recovers, a blocked invocation still completes', async () => {
    const caller = await registerOn(a);
    const worker = await registerOn(b);
    const config = await http(
      a,
      'PUT',
      `/api/agents/${encodeURIComponent(worker.did)}/invocation`,
      worker.token,
      { enabled: true, delivery_mode: 'queue' },
    );
    assert.equal(config.status, 200);
    const invocation = http(a, 'POST', '/api/invoke', caller.token, {
      target_did: worker.did,
      capability: 'echo',
      input: {},
      timeout_ms: 60_000,
    });
    let tasks: { task_id: string }[] = [];
    while (tasks.length === 0)
      tasks = (await http(b, 'GET', '/api/agent/tasks?wait=5', worker.token)).body.tasks as {
        task_id: string;
      }[];
    const id = tasks[0]!.task_id;

    cluster.stop('fast');
    try {
      for (const node of [a, b]) {
        const response = await http(node, 'GET', `/api/agents/${encodeURIComponent(caller.did)}`);
        assert.equal(response.status, 503, JSON.stringify(response.body));
        assert.equal(response.body.code, 'DATABASE_UNAVAILABLE');
        assert.equal((await http(node, 'GET', '/readyz')).status, 503);
      }
    } finally {
      cluster.start();
    }

    let result = { status: 0, body: {} as Record<string, unknown> };
    for (let attempt = 0; attempt < 100 && result.status !== 200; attempt++) {
      result = await http(b, 'POST', `/api/agent/tasks/${id}/result`, worker.token, {
        output: { after: 'restart' },
      });
      if (result.status !== 200) {
        assert.equal(result.status, 503, JSON.stringify(result.body));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    assert.equal(result.status, 200, 'node B recovered by itself');
    const response = await invocation;
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body.output, { after: 'restart' });
    assert.equal((await http(a, 'GET', '/readyz')).status, 200);
  });
});
