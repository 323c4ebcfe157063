import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { INVOCATION_LIMITS } from '@agent-registry/protocol';
import {
  AgentKey,
  InvocationFailedError,
  InvocationTimeoutError,
  RegistryClient,
  serve,
  type Profile,
  type Worker,
} from '../src/index.js';
import {
  createTestDatabase,
  eventually,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

const profile = (name: string, outputSchema?: Record<string, unknown>): Profile => ({
  name,
  capabilities: [
    {
      type: 'translation',
      description: 'English to French',
      ...(outputSchema ? { output_schema: outputSchema } : {}),
    },
    { type: 'summary', description: 'Offered but not served by the worker' },
  ],
});

async function queueAgent(url: string, name: string, outputSchema?: Record<string, unknown>) {
  const client = new RegistryClient({ registry: url, key: AgentKey.generateEd25519() });
  const { did } = await client.register(profile(name, outputSchema));
  await client.setInvocation({ enabled: true, delivery_mode: 'queue' });
  return { client, did };
}

async function caller(url: string): Promise<RegistryClient> {
  const client = new RegistryClient({ registry: url, key: AgentKey.generateEd25519() });
  await client.register(profile('Caller'));
  return client;
}

/** A gate handlers wait on, so tests decide when they finish. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('serve(): the queue worker against a real registry (SQLite)', () => {
  let database: TestDatabase;
  let registry: RegistryProcess;
  before(async () => {
    database = await createTestDatabase('sqlite');
    registry = await registryProcess(database);
  });
  after(async () => {
    await registry.stop();
    await database.drop();
  });

  test('runs at most `concurrency` handlers at once and answers every task', async () => {
    const { client, did } = await queueAgent(registry.url, 'Concurrent');
    const release = gate();
    let running = 0;
    let peak = 0;
    let started = 0;
    const worker = serve({
      client,
      concurrency: 2,
      capabilities: {
        translation: async (input) => {
          running++;
          started++;
          peak = Math.max(peak, running);
          await release.opened;
          running--;
          return { text: `fr: ${String(input.text)}` };
        },
      },
    });
    try {
      const invoker = await caller(registry.url);
      const calls = [1, 2, 3, 4, 5].map((n) =>
        invoker.invoke(did, 'translation', { text: `t${n}` }, { timeoutMs: 60_000 }),
      );
      await eventually(() => started === 2, 'two handlers to start');
      // With both slots busy the worker does not take a third task.
      assert.equal(worker.active, 2);
      assert.equal(started, 2);
      release.open();
      const outputs = await Promise.all(calls);
      assert.deepEqual(outputs.map((output) => output.text).sort(), [
        'fr: t1',
        'fr: t2',
        'fr: t3',
        'fr: t4',
        'fr: t5',
      ]);
      assert.equal(peak, 2);
    } finally {
      await worker.close();
    }
  });

  test('with more slots than a poll may ask for, it asks for the most the registry gives and serves', async () => {
    const { client, did } = await queueAgent(registry.url, 'Wide');
    const errors: unknown[] = [];
    const worker = serve({
      client,
      concurrency: INVOCATION_LIMITS.pendingTasksMaxLimit + 10,
      capabilities: { translation: async (input) => ({ text: `fr: ${String(input.text)}` }) },
    });
    worker.on('error', (error) => errors.push(error));
    try {
      const invoker = await caller(registry.url);
      const output = await invoker.invoke(did, 'translation', { text: 'wide' }, { timeoutMs: 10_000 });
      assert.equal(output.text, 'fr: wide');
      assert.deepEqual(errors, []);
    } finally {
      await worker.close();
    }
  });

  test('with concurrency > 1, a task polled again before its accept lands goes to one slot only', async () => {
    // The accept of each task is held back until a later poll has answered: that poll sees the task
    // still pending, as a re-poll racing the accept does on a busy registry.
    const accepts: { taskId: string; status: number }[] = [];
    const pollAnswered: (() => void)[] = [];
    let closing = false;
    const heldFetch: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const accept = /\/api\/agent\/tasks\/([^/]+)\/accept$/.exec(url.pathname);
      if (accept && !closing) await new Promise<void>((resolve) => pollAnswered.push(resolve));
      const response = await fetch(input, init);
      if (accept) accepts.push({ taskId: decodeURIComponent(accept[1] as string), status: response.status });
      if (url.pathname === '/api/agent/tasks') for (const release of pollAnswered.splice(0)) release();
      return response;
    };
    const key = AgentKey.generateEd25519();
    const client = new RegistryClient({ registry: registry.url, key, fetch: heldFetch });
    const { did } = await client.register(profile('Held accepts'));
    await client.setInvocation({ enabled: true, delivery_mode: 'queue' });
    const runs: string[] = [];
    const worker = serve({
      client,
      concurrency: 4,
      waitSeconds: 1,
      capabilities: {
        translation: async (input, ctx) => {
          runs.push(ctx.task.task_id);
          return { text: `fr: ${String(input.text)}` };
        },
      },
    });
    try {
      const invoker = await caller(registry.url);
      const outputs = await Promise.all(
        [1, 2, 3].map((n) => invoker.invoke(did, 'translation', { text: `t${n}` }, { timeoutMs: 30_000 })),
      );
      assert.deepEqual(outputs.map((output) => output.text).sort(), ['fr: t1', 'fr: t2', 'fr: t3']);
      assert.deepEqual(
        accepts.filter((accept) => accept.status !== 200),
        [],
        'no accept is refused (409) because the task already went to another slot',
      );
      assert.equal(accepts.length, 3, JSON.stringify(accepts));
      assert.equal(new Set(runs).size, runs.length, 'no task ran twice');
    } finally {
      closing = true;
      for (const release of pollAnswered.splice(0)) release();
      await worker.close();
    }
  });

  test('ctx.signal aborts at the task deadline; the caller gets the deadline error', async () => {
    const { client, did } = await queueAgent(registry.url, 'Slow');
    let abortedWith: unknown;
    const worker = serve({
      client,
      capabilities: {
        translation: (_input, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => {
              abortedWith = ctx.signal.reason;
              reject(ctx.signal.reason as Error);
            });
          }),
      },
    });
    try {
      const invoker = await caller(registry.url);
      await assert.rejects(
        invoker.invoke(did, 'translation', { text: 'x' }, { timeoutMs: 1_500 }),
        (error: unknown) => {
          // The registry's timeout and the worker's deadline failure race; either names the task.
          assert.ok(
            error instanceof InvocationTimeoutError || error instanceof InvocationFailedError,
            String(error),
          );
          assert.match(error.taskId ?? '', /.+/);
          return true;
        },
      );
      await eventually(() => abortedWith !== undefined, 'the handler to see the abort');
      assert.match(String(abortedWith), /deadline/);
    } finally {
      await worker.close();
    }
  });

  test('thrown errors, missing handlers and outputs that break output_schema fail the task with the reason', async () => {
    const schema = {
      type: 'object',
      required: ['text'],
      properties: { text: { type: 'string' } },
      additionalProperties: false,
    };
    const { client, did } = await queueAgent(registry.url, 'Strict', schema);
    const failed: string[] = [];
    const worker: Worker = serve({
      client,
      capabilities: {
        translation: async (input) =>
          input.bad ? { txt: 'oops' } : input.boom ? Promise.reject(new Error('boom!')) : { text: 'ok' },
      },
    }).on('failed', ({ error }) => failed.push(error));
    try {
      const invoker = await caller(registry.url);
      assert.deepEqual(await invoker.invoke(did, 'translation', {}, { timeoutMs: 20_000 }), { text: 'ok' });
      await assert.rejects(
        invoker.invoke(did, 'translation', { bad: true }, { timeoutMs: 20_000 }),
        (error: unknown) => {
          assert.ok(error instanceof InvocationFailedError);
          assert.match(error.details, /output_schema of "translation"/);
          assert.match(error.details, /required property 'text'/);
          return true;
        },
      );
      await assert.rejects(
        invoker.invoke(did, 'translation', { boom: true }, { timeoutMs: 20_000 }),
        /boom!/,
      );
      await assert.rejects(
        invoker.invoke(did, 'summary', {}, { timeoutMs: 20_000 }),
        /no handler for capability "summary"/,
      );
      assert.equal(failed.length, 3);
    } finally {
      await worker.close();
    }
  });

  test('close() lets an in-flight task finish and stops polling', async () => {
    const { client, did } = await queueAgent(registry.url, 'Closing');
    const release = gate();
    let started = false;
    const worker = serve({
      client,
      capabilities: {
        translation: async () => {
          started = true;
          await release.opened;
          return { text: 'finished' };
        },
      },
    });
    const invoker = await caller(registry.url);
    const call = invoker.invoke(did, 'translation', {}, { timeoutMs: 30_000 });
    await eventually(() => started, 'the handler to start');
    const closed = worker.close();
    release.open();
    await closed;
    assert.deepEqual(await call, { text: 'finished' });
    assert.equal(worker.active, 0);
    // Nothing serves the queue any more.
    await assert.rejects(invoker.invoke(did, 'translation', {}, { timeoutMs: 500 }), InvocationTimeoutError);
  });

  test('after close() the agent reads offline on the next request, and a call is refused at once as offline', async () => {
    const { client, did } = await queueAgent(registry.url, 'Stops cleanly');
    const worker = serve({ client, capabilities: { translation: async () => ({ text: 'x' }) } });
    const connected = new Promise<void>((resolve) => worker.on('connected', () => resolve()));
    await connected;
    const invoker = await caller(registry.url);
    assert.equal((await invoker.getAgent(did)).availability.status, 'online');
    await worker.close();

    const profile = await invoker.getAgent(did);
    assert.equal(profile.availability.status, 'offline');
    assert.notEqual(profile.availability.last_seen_at, null);
    const online = await invoker.search({ capability: 'translation', available: true, limit: 100 });
    assert.ok(!online.agents.some((agent) => agent.did === did), 'left out of available=true');

    // Refused before it is sent, not after this call's 60 s: offlineSince is only set on that refusal.
    const refused = await invoker.invoke(did, 'translation', {}, { timeoutMs: 60_000 }).then(
      () => assert.fail('the call was answered'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof InvocationTimeoutError, String(refused));
    assert.equal(refused.offlineSince, new Date(profile.availability.last_seen_at ?? 0).toISOString());
    assert.match(
      refused.message + JSON.stringify(refused.body ?? {}),
      /its worker stopped at .* and said so/,
    );

    // Serving again makes it online again.
    const again = serve({ client, capabilities: { translation: async () => ({ text: 'back' }) } });
    await new Promise<void>((resolve) => again.on('connected', () => resolve()));
    assert.equal((await invoker.getAgent(did)).availability.status, 'online');
    assert.deepEqual(await invoker.invoke(did, 'translation', {}, { timeoutMs: 30_000 }), { text: 'back' });
    await again.close();
  });

  test('reconnects with backoff across a registry restart', async () => {
    const { client, did } = await queueAgent(registry.url, 'Resilient');
    const events: string[] = [];
    const worker = serve({
      client,
      backoff: { initialMs: 100, maxMs: 1_000 },
      capabilities: { translation: async () => ({ text: 'still here' }) },
    })
      .on('connected', () => events.push('connected'))
      .on('disconnected', () => events.push('disconnected'));
    try {
      await eventually(() => events.includes('connected'), 'the first poll');
      await registry.stop();
      await eventually(() => events.includes('disconnected'), 'the worker to notice the restart');
      await registry.start();
      await eventually(
        () => events.filter((event) => event === 'connected').length === 2,
        'the worker to reconnect',
      );
      const invoker = await caller(registry.url);
      assert.deepEqual(await invoker.invoke(did, 'translation', {}, { timeoutMs: 20_000 }), {
        text: 'still here',
      });
    } finally {
      await worker.close();
    }
  });
});

describe('serve() on PostgreSQL across two registry nodes', () => {
  let database: TestDatabase;
  let nodeA: RegistryProcess;
  let nodeB: RegistryProcess;
  before(async () => {
    database = await createTestDatabase('postgres');
    nodeA = await registryProcess(database);
    // Both nodes are one registry: the same PUBLIC_URL.
    nodeB = await registryProcess(database, { publicUrl: nodeA.url });
  });
  after(async () => {
    await nodeA.stop();
    await nodeB.stop();
    await database.drop();
  });

  test('a worker polling node A answers an invocation made on node B', async () => {
    const { client, did } = await queueAgent(nodeA.url, 'Two nodes');
    const worker = serve({
      client,
      concurrency: 2,
      capabilities: { translation: async (input) => ({ echoed: input }) },
    });
    try {
      const invoker = new RegistryClient({
        registry: nodeB.url,
        audience: nodeA.url,
        key: AgentKey.generateEd25519(),
      });
      await invoker.register(profile('Caller on B'));
      const outputs = await Promise.all(
        [1, 2, 3].map((n) => invoker.invoke(did, 'translation', { n }, { timeoutMs: 30_000 })),
      );
      assert.deepEqual(outputs, [{ echoed: { n: 1 } }, { echoed: { n: 2 } }, { echoed: { n: 3 } }]);
    } finally {
      await worker.close();
    }
  });
});
