import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { openTaskLoadQuery, openTaskLoadsQuery } from '../../../src/modules/tasks/open-task-loads-store.js';
import { InProcessTaskEvents } from '../../../src/modules/tasks/events.js';
import { TaskStateMachine } from '../../../src/modules/tasks/task-state.js';
import { TASK_LIMITS as LIMITS } from '../../../src/modules/tasks/task-limits.js';
import { runTaskMaintenance } from '../../../src/modules/tasks/task-maintenance.js';
import { startListeningRegistry, type ListeningRegistry } from '../../support/faces-helpers.js';
import {
  agentPath,
  bearer,
  createTestDatabase,
  testDatabase,
  type TestDatabase,
} from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import { startWithAgent } from '../../support/registry-setup.js';

type Inject = TestRegistry['app']['inject'];
type Reply = Awaited<ReturnType<Inject>>;

const call = (
  registry: TestRegistry,
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  token: string,
  payload?: Record<string, unknown>,
): Promise<Reply> =>
  registry.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

async function queueAgent(registry: TestRegistry): Promise<Registered> {
  const agent = await register(registry, undefined, { name: 'Worker', capabilities: [{ type: 'echo' }] });
  const config = await call(registry, 'PUT', agentPath(agent.did, '/invocation'), agent.token, {
    enabled: true,
    delivery_mode: 'queue',
  });
  assert.equal(config.statusCode, 200, config.body);
  return agent;
}

const invoke = (
  registry: TestRegistry,
  caller: Registered,
  target: string,
  input: Record<string, unknown> = { text: 'hi' },
  timeoutMs = 100,
) =>
  call(registry, 'POST', '/api/invoke', caller.token, {
    target_did: target,
    capability: 'echo',
    input,
    timeout_ms: timeoutMs,
  });

/** Lists the agent's pending tasks (no long poll) until `count` are there; bounded. */
async function pendingTasks(
  registry: TestRegistry,
  agent: Registered,
  count: number,
): Promise<{ task_id: string; input: Record<string, unknown> }[]> {
  let tasks: { task_id: string; input: Record<string, unknown> }[] = [];
  for (let attempt = 0; attempt < 400 && tasks.length < count; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25));
    tasks = (await call(registry, 'GET', '/api/agent/tasks?limit=50', agent.token)).json().tasks;
  }
  return tasks;
}

/** An input whose JSON is `bytes` long. */
const inputOf = (bytes: number): Record<string, unknown> => ({
  text: 'x'.repeat(bytes - '{"text":""}'.length),
});

function assertTooMany(response: Reply, code: string): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.json().code, code);
  assert.match(response.json().details as string, /\d/);
  assert.ok(Number(response.headers['retry-after']) >= 1, 'Retry-After in seconds');
}

describe('the queue of one agent is bounded', () => {
  let registry: TestRegistry;
  let caller: Registered;
  before(async () => {
    ({ registry, agent: caller } = await startWithAgent({ TASK_MAX_POLLS_PER_AGENT: '2' }));
  });
  after(() => registry.close());

  test('a page of pending tasks stops at its byte budget, and holds at least one task', async () => {
    const worker = await queueAgent(registry);
    const size = 1024 * 1024;
    // Blocked until the registry closes (answered 503 then).
    for (let i = 0; i < 6; i++)
      void invoke(registry, caller, worker.did, { ...inputOf(size - 10), i: 1000 + i }, 60_000);
    const all = await pendingTasks(registry, worker, 4);
    assert.ok(all.length >= 4);
    // Six 1 MiB tasks are pending once the listing shows them; wait for the last two to be written too.
    for (let attempt = 0; attempt < 400; attempt++) {
      const counted = await registry.ctx.database.db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('target_did', '=', worker.did)
        .executeTakeFirstOrThrow();
      if (Number(counted.n) === 6) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const page = await call(registry, 'GET', '/api/agent/tasks?limit=50', worker.token);
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^application\/json/);
    const tasks = page.json().tasks as { task_id: string; input: { i: number } }[];
    assert.equal(tasks.length, 4, 'four tasks of just under 1 MiB fit in 4 MiB, the fifth does not');
    assert.ok(
      page.rawPayload.length <= LIMITS.pendingTasksPageMaxBytes + 4096,
      `${page.rawPayload.length} bytes`,
    );
    const oldest = await registry.ctx.database.db
      .selectFrom('tasks')
      .select(['id', 'input'])
      .where('target_did', '=', worker.did)
      .orderBy('created_at')
      .orderBy('id')
      .limit(4)
      .execute();
    assert.deepEqual(
      tasks.map((task) => task.task_id),
      oldest.map((row) => row.id),
      'oldest first',
    );
    assert.deepEqual(
      tasks.map((task) => JSON.stringify(task.input)),
      oldest.map((row) => row.input),
      'each input as it was sent',
    );
    const one = await call(registry, 'GET', '/api/agent/tasks?limit=1', worker.token);
    assert.equal(one.json().tasks.length, 1);
  });

  test('more polls at once than TASK_MAX_POLLS_PER_AGENT answer 429 TOO_MANY_POLLS', async () => {
    const worker = await queueAgent(registry);
    const polls = [0, 1].map(() => call(registry, 'GET', '/api/agent/tasks?wait=1', worker.token));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assertTooMany(await call(registry, 'GET', '/api/agent/tasks?wait=1', worker.token), 'TOO_MANY_POLLS');
    assertTooMany(await call(registry, 'GET', '/api/agent/tasks', worker.token), 'TOO_MANY_POLLS');
    const other = await queueAgent(registry);
    assert.equal((await call(registry, 'GET', '/api/agent/tasks', other.token)).statusCode, 200, 'per agent');
    for (const poll of await Promise.all(polls)) assert.equal(poll.statusCode, 200);
    assert.equal((await call(registry, 'GET', '/api/agent/tasks', worker.token)).statusCode, 200, 'freed');
  });

  test('a task one long poll returned is not returned by another long poll until its lease ends', async () => {
    const worker = await queueAgent(registry);
    const blocked = invoke(registry, caller, worker.did, { text: 'once' }, 60_000);
    const first = await call(registry, 'GET', '/api/agent/tasks?wait=5', worker.token);
    const taskId = (first.json().tasks as { task_id: string }[])[0]?.task_id;
    assert.ok(taskId);
    const second = await call(registry, 'GET', '/api/agent/tasks?wait=0.3', worker.token);
    assert.deepEqual(second.json(), { tasks: [] }, 'leased to the first poll');
    const listed = await call(registry, 'GET', '/api/agent/tasks', worker.token);
    assert.deepEqual(
      (listed.json().tasks as { task_id: string }[]).map((task) => task.task_id),
      [taskId],
      'a plain listing still shows every pending task',
    );
    registry.clock.advance(LIMITS.pendingTaskLeaseMs);
    await call(registry, 'GET', '/api/agent/tasks', worker.token);
    const afterListing = await call(registry, 'GET', '/api/agent/tasks?wait=0.3', worker.token);
    assert.deepEqual(afterListing.json(), { tasks: [] }, 'a listing leases what it shows, too');
    registry.clock.advance(LIMITS.pendingTaskLeaseMs);
    const third = await call(registry, 'GET', '/api/agent/tasks?wait=5', worker.token);
    assert.equal((third.json().tasks as { task_id: string }[])[0]?.task_id, taskId, 'lease over');
    const done = await call(registry, 'POST', `/api/agent/tasks/${taskId}/result`, worker.token, {
      output: {},
    });
    assert.equal(done.statusCode, 200);
    assert.equal((await blocked).statusCode, 200);
  });

  test('concurrent long polls of one agent: one task goes to exactly one of them', async () => {
    const worker = await queueAgent(registry);
    const polls = [0, 1].map(() => call(registry, 'GET', '/api/agent/tasks?wait=1', worker.token));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const blocked = invoke(registry, caller, worker.did, { text: 'one' }, 60_000);
    const answers = (await Promise.all(polls)).map((poll) => poll.json().tasks as { task_id: string }[]);
    const handed = answers.flat();
    assert.equal(handed.length, 1, JSON.stringify(answers));
    await call(registry, 'POST', `/api/agent/tasks/${handed[0]!.task_id}/result`, worker.token, {
      output: {},
    });
    assert.equal((await blocked).statusCode, 200);
  });
});

test('the open-task counts of an invocation read only the covering partial indexes (SQLite plan)', async (t) => {
  if (testDatabase !== 'sqlite') return t.skip("the plan checked is SQLite's (no ANALYZE)");
  const registry = await startRegistry();
  try {
    const { db } = registry.ctx.database;
    for (const [side, index] of [
      ['caller_did', 'tasks_open_caller_idx'],
      ['target_did', 'tasks_open_target_idx'],
    ] as const) {
      const query = openTaskLoadQuery(db, side, 'did:web:x:agent:a', 1).compile();
      const { rows } = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
      );
      const plan = rows.map((row) => row.detail).join('\n');
      assert.match(plan, new RegExp(`USING COVERING INDEX ${index}`), plan);
    }
    // The invocation reads both sides in one statement: each side keeps its own index there.
    const both = openTaskLoadsQuery(db, 'did:web:x:agent:a', 1, 'did:web:x:agent:b', 1).compile();
    const { rows } = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${both.sql}`, [...both.parameters]),
    );
    const plan = rows.map((row) => row.detail).join('\n');
    assert.match(plan, /USING COVERING INDEX tasks_open_caller_idx/, plan);
    assert.match(plan, /USING COVERING INDEX tasks_open_target_idx/, plan);
  } finally {
    await registry.close();
  }
});

test('one new task wakes one waiting long poll, not all of them', async () => {
  const events = new InProcessTaskEvents();
  const woken: number[] = [];
  const unsubscribe = [0, 1, 2].map((index) => events.onWorkAvailable('did:a', () => woken.push(index)));
  await events.workAvailable('did:a');
  assert.deepEqual(woken, [0]);
  await events.workAvailable('did:a');
  await events.workAvailable('did:a');
  await events.workAvailable('did:a');
  assert.deepEqual(woken, [0, 1, 2, 0], 'in turn');
  for (const stop of unsubscribe) stop();
  await events.close();
});

describe('what invocations may hold open and send', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({
      TASK_MAX_OPEN_PER_CALLER: '2',
      TASK_MAX_OPEN_PER_TARGET: '3',
      TASK_MAX_OPEN_MB_PER_CALLER: '1',
      INVOKE_RATE_LIMIT: '5',
      INVOKE_RATE_MB: '2',
      INVOKE_RATE_WINDOW_SECONDS: '60',
    });
  });
  after(() => registry.close());

  /** Moves the clock to a new rate window and past every open task's deadline. */
  const nextWindow = () => registry.clock.advance(61_000);

  test('a caller with TASK_MAX_OPEN_PER_CALLER open tasks gets 429 TOO_MANY_OPEN_TASKS, even invoking itself', async () => {
    nextWindow();
    const caller = await queueAgent(registry);
    for (let i = 0; i < 2; i++) void invoke(registry, caller, caller.did, { text: 'self' }, 60_000);
    await pendingTasks(registry, caller, 2);
    assertTooMany(await invoke(registry, caller, caller.did), 'TOO_MANY_OPEN_TASKS');
    const other = await register(registry);
    nextWindow();
    const target = await queueAgent(registry);
    const later = invoke(registry, other, target.did);
    assert.equal((await later).statusCode, 504, 'another caller is not held back');
    // Past their deadline the open tasks no longer count.
    assert.equal((await invoke(registry, caller, target.did)).statusCode, 504);
  });

  test('open input bytes per caller are bounded too', async () => {
    nextWindow();
    const caller = await register(registry);
    const target = await queueAgent(registry);
    void invoke(registry, caller, target.did, inputOf(600 * 1024), 60_000);
    await pendingTasks(registry, target, 1);
    const refused = await invoke(registry, caller, target.did, inputOf(600 * 1024));
    assertTooMany(refused, 'TOO_MANY_OPEN_TASKS');
    assert.match(refused.json().details as string, /MiB/);
  });

  test('a target with TASK_MAX_OPEN_PER_TARGET open tasks refuses more from any caller', async () => {
    nextWindow();
    const target = await queueAgent(registry);
    const callers = await Promise.all([0, 1, 2, 3].map(() => register(registry)));
    for (const caller of callers.slice(0, 3)) void invoke(registry, caller, target.did, { t: 1 }, 60_000);
    await pendingTasks(registry, target, 3);
    const refused = await invoke(registry, callers[3]!, target.did);
    assertTooMany(refused, 'TOO_MANY_OPEN_TASKS');
    assert.ok((refused.json().details as string).includes(target.did));
  });

  test('INVOKE_RATE_LIMIT invocations per window, then 429 INVOCATION_RATE_LIMITED until the next window', async () => {
    nextWindow();
    const caller = await register(registry);
    const target = await queueAgent(registry);
    for (let i = 0; i < 5; i++) assert.equal((await invoke(registry, caller, target.did)).statusCode, 504);
    const refused = await invoke(registry, caller, target.did);
    assertTooMany(refused, 'INVOCATION_RATE_LIMITED');
    assert.ok(Number(refused.headers['retry-after']) <= 60);
    // A refused invocation creates no task and counts nothing.
    const made = await registry.ctx.database.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('caller_did', '=', caller.did)
      .executeTakeFirstOrThrow();
    assert.equal(Number(made.n), 5);
    nextWindow();
    assert.equal((await invoke(registry, caller, target.did)).statusCode, 504, 'a new window');
  });

  test('INVOKE_RATE_MB of input per window', async () => {
    nextWindow();
    const caller = await register(registry);
    const target = await queueAgent(registry);
    for (let i = 0; i < 2; i++) {
      const sent = await invoke(registry, caller, target.did, inputOf(900 * 1024));
      assert.equal(sent.statusCode, 504);
    }
    const refused = await invoke(registry, caller, target.did, inputOf(900 * 1024));
    assertTooMany(refused, 'INVOCATION_RATE_LIMITED');
    assert.match(refused.json().details as string, /2 MiB of input/);
    assert.equal((await invoke(registry, caller, target.did)).statusCode, 504, 'small inputs still fit');
  });
});

/** An invocation sent from the client address `address`. */
const invokeFrom = (
  registry: TestRegistry,
  address: string,
  caller: Registered,
  target: string,
  input: Record<string, unknown>,
  timeoutMs = 100,
): Promise<Reply> =>
  registry.app.inject({
    method: 'POST',
    url: '/api/invoke',
    remoteAddress: address,
    headers: bearer(caller.token),
    payload: { target_did: target, capability: 'echo', input, timeout_ms: timeoutMs },
  });

/** Input bytes stored in the tasks of `callers`. */
async function storedInput(registry: TestRegistry, callers: Registered[]): Promise<number> {
  const row = await registry.ctx.database.db
    .selectFrom('tasks')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('input_bytes'), eb.lit(0)).as('bytes'))
    .where(
      'caller_did',
      'in',
      callers.map((caller) => caller.did),
    )
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

describe('task storage per client address and per network, whatever agents call from there', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({
      INVOKE_RATE_MB: '2',
      INVOKE_RATE_MB_PER_ADDRESS: '3',
      INVOKE_RATE_MB_PER_NETWORK: '5',
      INVOKE_RATE_WINDOW_SECONDS: '60',
    });
  });
  after(() => registry.close());
  const MIB = 1024 * 1024;
  const large = inputOf(900 * 1024);

  /** Each caller in turn sends large inputs from its address until refused (at most `most` each). */
  async function fill(
    target: Registered,
    senders: { address: string; caller: Registered }[],
    most: number,
  ): Promise<Reply[]> {
    const refusals: Reply[] = [];
    for (const { address, caller } of senders) {
      for (let i = 0; i < most; i++) {
        const sent = await invokeFrom(registry, address, caller, target.did, large);
        if (sent.statusCode === 429) {
          refusals.push(sent);
          break;
        }
        assert.equal(sent.statusCode, 504, sent.body);
      }
    }
    return refusals;
  }

  test('four agents calling from one address share INVOKE_RATE_MB_PER_ADDRESS', async () => {
    registry.clock.advance(61_000);
    const target = await queueAgent(registry);
    const callers = await Promise.all([0, 1, 2, 3].map(() => register(registry)));
    const refusals = await fill(
      target,
      callers.map((caller) => ({ address: '203.0.113.50', caller })),
      2, // within each caller's own 2 MiB
    );
    const stored = await storedInput(registry, callers);
    assert.ok(stored <= 3 * MIB, `stored ${stored} bytes from one address; at most 3 MiB`);
    assert.ok(stored > 2 * MIB, 'the first callers were served');
    const [refused] = refusals;
    assert.ok(refused !== undefined);
    assertTooMany(refused, 'INVOCATION_RATE_LIMITED');
    assert.match(
      refused.json().details as string,
      /At most 3 MiB of input per 60 s from one client address \(203\.0\.113\.50\), shared by every agent calling from there; try again in \d+ s/,
    );
    assert.ok(Number(refused.headers['retry-after']) <= 60);
    // Another address of the same /24 is still served, and the next window serves this one again.
    assert.equal(
      (await invokeFrom(registry, '203.0.113.51', callers[3]!, target.did, large)).statusCode,
      504,
    );
    registry.clock.advance(61_000);
    assert.equal(
      (await invokeFrom(registry, '203.0.113.50', callers[0]!, target.did, large)).statusCode,
      504,
    );
  });

  test('the addresses of one /24, and the /64s of one IPv6 /48, share INVOKE_RATE_MB_PER_NETWORK', async () => {
    for (const [addresses, network] of [
      [['198.51.100.1', '198.51.100.2', '198.51.100.3', '::ffff:198.51.100.4'], '198.51.100.0/24'],
      [['2001:db8:5:1::1', '2001:db8:5:2::1', '2001:db8:5:3::1', '2001:db8:5:4::1'], '2001:db8:5::/48'],
    ] as const) {
      registry.clock.advance(61_000);
      const target = await queueAgent(registry);
      const senders = await Promise.all(
        addresses.map(async (address) => ({ address, caller: await register(registry) })),
      );
      const refusals = await fill(target, senders, 2);
      const callers = senders.map((sender) => sender.caller);
      const stored = await storedInput(registry, callers);
      assert.ok(stored <= 5 * MIB, `stored ${stored} bytes from ${network}; at most 5 MiB`);
      assert.ok(stored > 4 * MIB, 'the first addresses were served');
      const [refused] = refusals;
      assert.ok(refused !== undefined, network);
      assertTooMany(refused, 'INVOCATION_RATE_LIMITED');
      assert.ok((refused.json().details as string).includes(`from one network (${network})`), refused.body);
    }
  });
});

describe('the open input of the whole registry is capped (TASK_MAX_OPEN_MB_TOTAL)', () => {
  test('past the cap: 503 TASK_STORAGE_FULL with Retry-After, nothing stored; served again as tasks end', async () => {
    const registry = await startRegistry({ TASK_MAX_OPEN_MB_TOTAL: '2' });
    try {
      const target = await queueAgent(registry);
      const callers = await Promise.all([0, 1, 2].map(() => register(registry)));
      const large = inputOf(900 * 1024);
      // Two open tasks from two addresses hold 1.8 MiB: no other bound is near.
      void invokeFrom(registry, '192.0.2.1', callers[0]!, target.did, large, 60_000);
      void invokeFrom(registry, '192.0.2.200', callers[1]!, target.did, large, 60_000);
      await pendingTasks(registry, target, 2);
      const refused = await invokeFrom(registry, '198.51.100.9', callers[2]!, target.did, large);
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().code, 'TASK_STORAGE_FULL');
      assert.equal(refused.headers['retry-after'], '30');
      assert.match(
        refused.json().details as string,
        /at most 2 MiB for all callers together; no task was created\. Retry in 30 s/,
      );
      assert.equal(await storedInput(registry, [callers[2]!]), 0, 'the refused input was not stored');
      assert.equal(
        (await invokeFrom(registry, '198.51.100.9', callers[2]!, target.did, { t: 1 })).statusCode,
        504,
        'a small input still fits',
      );
      // Past their deadline the open tasks no longer hold their input.
      registry.clock.advance(61_000);
      assert.equal(
        (await invokeFrom(registry, '198.51.100.9', callers[2]!, target.did, large)).statusCode,
        504,
      );
    } finally {
      await registry.close();
    }
  });
});

describe('a caller that hangs up', () => {
  let registry: ListeningRegistry;
  before(async () => {
    registry = await startListeningRegistry();
  });
  after(() => registry.close());

  test('takes its pending task (sent without an Idempotency-Key) out of the queue', async () => {
    const caller = await register(registry);
    const worker = await queueAgent(registry);
    const hangUp = new AbortController();
    const invocation = fetch(`${registry.url}/api/invoke`, {
      method: 'POST',
      headers: { ...bearer(caller.token), 'content-type': 'application/json' },
      body: JSON.stringify({ target_did: worker.did, capability: 'echo', input: {}, timeout_ms: 300_000 }),
      signal: hangUp.signal,
    });
    const [task] = await pendingTasks(registry, worker, 1);
    assert.ok(task);
    hangUp.abort();
    await invocation.catch(() => undefined);
    let left = [task];
    for (let attempt = 0; attempt < 200 && left.length > 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      left = (await call(registry, 'GET', '/api/agent/tasks', worker.token)).json().tasks;
    }
    assert.deepEqual(left, [], 'no longer pending');
    const read = await call(registry, 'GET', `/api/tasks/${task.task_id}`, caller.token);
    assert.equal(read.json().status, 'timeout');
    const accept = await call(registry, 'POST', `/api/agent/tasks/${task.task_id}/accept`, worker.token);
    assert.equal(accept.statusCode, 409);
  });
});

describe('ended tasks are kept for a bounded time', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ TASK_PAYLOAD_RETENTION_SECONDS: '3600', TASK_RETENTION_DAYS: '2' });
  });
  after(() => registry.close());

  const sweep = () =>
    runTaskMaintenance({
      db: registry.ctx.database.db,
      clock: registry.clock,
      states: new TaskStateMachine(registry.ctx.database.db, registry.clock, registry.ctx.events),
      bounds: registry.config.tasks,
    });

  test('the creator reads the output for TASK_PAYLOAD_RETENTION_SECONDS; then the payloads, later the row, go', async () => {
    const caller = await register(registry);
    const worker = await queueAgent(registry);
    const blocked = invoke(registry, caller, worker.did, { secret: 'input' }, 60_000);
    const [task] = await pendingTasks(registry, worker, 1);
    assert.ok(task);
    await call(registry, 'POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, {
      output: { answer: 42 },
    });
    assert.equal((await blocked).statusCode, 200);
    const read = () => call(registry, 'GET', `/api/tasks/${task.task_id}`, caller.token);

    registry.clock.advance(3_600_000 - 1);
    await sweep();
    assert.deepEqual((await read()).json().output, { answer: 42 }, 'within the window');

    registry.clock.advance(2);
    const run = await sweep();
    assert.ok(run.payloadsPurged >= 1, JSON.stringify(run));
    const purged = (await read()).json();
    assert.equal(purged.status, 'completed');
    assert.equal(purged.output, undefined, 'output dropped');
    const row = await registry.ctx.database.db
      .selectFrom('tasks')
      .select(['input', 'output'])
      .where('id', '=', task.task_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { input: '{}', output: null });

    registry.clock.advance(2 * 86_400_000);
    assert.ok((await sweep()).tasksDeleted >= 1);
    const gone = await registry.ctx.database.db
      .selectFrom('tasks')
      .select('id')
      .where('id', '=', task.task_id)
      .executeTakeFirst();
    assert.equal(gone, undefined, 'the row is deleted after TASK_RETENTION_DAYS');
  });

  test('settings: rows must outlive payloads', async () => {
    await assert.rejects(
      startRegistry({ TASK_PAYLOAD_RETENTION_SECONDS: '172800', TASK_RETENTION_DAYS: '1' }),
      /TASK_RETENTION_DAYS must be at least TASK_PAYLOAD_RETENTION_SECONDS/,
    );
  });
});

describe(
  'two nodes on one PostgreSQL share the limits',
  {
    skip: testDatabase === 'postgres' ? false : 'several nodes share one database only on PostgreSQL',
  },
  () => {
    let database: TestDatabase;
    let a: TestRegistry;
    let b: TestRegistry;
    const env = { INVOKE_RATE_LIMIT: '3', TASK_MAX_OPEN_PER_CALLER: '100' };
    before(async () => {
      database = await createTestDatabase();
      a = await startRegistry(env, { database });
      b = await startRegistry(env, { database });
    });
    after(async () => {
      await a.close();
      await b.close();
      await database.drop();
    });

    test('the rate limit counts invocations made on every node', async () => {
      const caller = await register(a);
      const target = await queueAgent(a);
      b.clock.advance(a.clock.now() - b.clock.now());
      const sent = await Promise.all([
        invoke(a, caller, target.did),
        invoke(b, caller, target.did),
        invoke(a, caller, target.did),
        invoke(b, caller, target.did),
      ]);
      const statuses = sent.map((response) => response.statusCode).sort();
      assert.deepEqual(statuses, [429, 504, 504, 504], JSON.stringify(sent.map((response) => response.body)));
    });

    test('a task leased to a long poll on one node is not handed out by another node', async () => {
      const caller = await register(a);
      const worker = await queueAgent(a);
      b.clock.advance(a.clock.now() - b.clock.now());
      const polls = [
        call(a, 'GET', '/api/agent/tasks?wait=2', worker.token),
        call(b, 'GET', '/api/agent/tasks?wait=2', worker.token),
      ];
      await new Promise((resolve) => setTimeout(resolve, 100));
      const blocked = invoke(a, caller, worker.did, { text: 'one' }, 60_000);
      const handed = (await Promise.all(polls)).flatMap((poll) => poll.json().tasks as { task_id: string }[]);
      assert.equal(handed.length, 1, JSON.stringify(handed));
      await call(b, 'POST', `/api/agent/tasks/${handed[0]!.task_id}/result`, worker.token, { output: {} });
      assert.equal((await blocked).statusCode, 200);
    });
  },
);
