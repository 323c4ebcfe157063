import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { http } from '../../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
  type QueueWorker,
} from '../../../support/faces-helpers.js';

/** JSON-RPC answers, read as loose JSON in assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const dataMessage = (input: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ data: input }],
  metadata: { capability: 'translate' },
  ...extra,
});

describe('A2A face: what the A2A compatibility kit checks, over raw JSON-RPC and the official client', () => {
  let registry: ListeningRegistry;
  let caller: Registered;
  let stranger: Registered;
  let worker: QueueWorker;
  let base: string;
  let client: Client;
  const auth = () => ({ serviceParameters: { authorization: `Bearer ${caller.token}` } });

  /** POSTs a body as it is (a string is sent unchanged) to the agent's base, as `as` (the caller). */
  const post = async (body: unknown, as: Registered = caller) => {
    const response = await fetch(base, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${as.token}`,
        'a2a-version': '1.0',
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const rpc = async (method: string, params: Record<string, unknown>, as: Registered = caller) =>
    (await post({ jsonrpc: '2.0', id: 7, method, params }, as)).body;

  /** One SendMessage answered by the worker with `answer`; the finished task as JSON. */
  const invoke = async (input: Record<string, unknown>, answer: Record<string, unknown> | string) => {
    const served = worker.serveOne(() => answer);
    const sent = await rpc('SendMessage', { message: dataMessage(input) });
    await served;
    assert.ok(sent.result?.task, JSON.stringify(sent));
    return sent.result.task as Json;
  };

  before(async () => {
    registry = await startListeningRegistry();
    caller = await register(registry);
    stranger = await register(registry);
    worker = await queueWorker(registry, {
      name: 'Kit target',
      tags: ['language'],
      capabilities: [{ type: 'translate', tags: ['fr', 'de'] }, { type: 'summarise' }],
    });
    base = `${registry.url}/a2a/${encodeURIComponent(worker.did)}/`;
    client = await new ClientFactory().createFromUrl(base);
  });
  after(() => registry?.close());

  test('a body that is not JSON is a JSON-RPC parse error (-32700, id null), not the REST error body', async () => {
    const answer = await post('{"jsonrpc": "2.0", "method": "GetTask", ');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.jsonrpc, '2.0');
    assert.equal(answer.body.id, null);
    assert.equal(answer.body.error.code, -32700);
    assert.equal(answer.body.code, undefined, 'no REST error body');
    // The token is still checked first, as HTTP.
    const anonymous = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    assert.equal(anonymous.status, 401);
  });

  test('a request that is not a JSON-RPC 2.0 request object is Invalid Request (-32600)', async () => {
    const cases: [unknown, string | number | null][] = [
      [{ jsonrpc: 'aaa', id: 5, method: 'GetTask', params: { id: 'x' } }, 5],
      [{ jsonrpc: '2.0', id: 'no-method', params: { id: 'x' } }, 'no-method'],
      [{ jsonrpc: '2.0', id: { an: 'object' }, method: 'GetTask', params: { id: 'x' } }, null],
      [[], null],
      [[{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }], null],
      ['"a string"', null],
      [{ jsonrpc: '2.0', id: 6, method: 'GetTask', params: 'x' }, 6],
    ];
    for (const [body, id] of cases) {
      const answer = await post(typeof body === 'string' ? body : body);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.error?.code, -32600, JSON.stringify({ body, answer: answer.body }));
      assert.equal(answer.body.id, id);
    }
    // A well-formed request for an unknown method is still Method not found.
    assert.equal((await rpc('NoSuchMethod', {})).error.code, -32601);
  });

  test('every skill has tags: the capability’s, else the profile’s, else the capability type', async () => {
    const card = (await (await fetch(`${base}.well-known/agent-card.json`)).json()) as Json;
    const tags = Object.fromEntries(card.skills.map((skill: Json) => [skill.id, skill.tags]));
    assert.deepEqual(tags, { translate: ['fr', 'de'], summarise: ['language'] });

    const untagged = await queueWorker(registry, { name: 'No tags', capabilities: [{ type: 'echo' }] });
    const bare = (await (
      await fetch(`${registry.url}/a2a/${encodeURIComponent(untagged.did)}/.well-known/agent-card.json`)
    ).json()) as Json;
    assert.deepEqual(bare.skills[0].tags, ['echo']);
    // The official client parses it with the tags.
    const parsed = await client.getAgentCard();
    assert.deepEqual(parsed.skills[1]?.tags, ['language']);
  });

  test('a message naming a task never starts a new one: unknown -32001, ended -32004', async () => {
    const ended = await invoke({ text: 'one' }, { done: true });
    const unknown = await rpc('SendMessage', {
      message: dataMessage({ text: 'two' }, { taskId: randomUUID() }),
    });
    assert.equal(unknown.error.code, -32001, JSON.stringify(unknown));
    const finished = await rpc('SendMessage', {
      message: dataMessage({ text: 'two' }, { taskId: ended.id }),
    });
    assert.equal(finished.error.code, -32004, JSON.stringify(finished));
    assert.match(finished.error.message, /has ended \(completed\)/);
    // Another caller naming this task is told it does not exist.
    const theirs = await rpc(
      'SendMessage',
      { message: dataMessage({ text: 'two' }, { taskId: ended.id }) },
      stranger,
    );
    assert.equal(theirs.error.code, -32001);
    // And no task reached the agent.
    const queued = await http(registry, 'GET', '/api/agent/tasks', worker.token);
    assert.deepEqual(queued.body.tasks, []);
  });

  test('a message without messageId and a negative historyLength are invalid params (-32602); history is the input', async () => {
    const noId = await rpc('SendMessage', { message: { role: 'ROLE_USER', parts: [{ data: { a: 1 } }] } });
    assert.equal(noId.error.code, -32602);
    assert.match(noId.error.message, /messageId/);
    const task = await invoke({ text: 'h' }, { ok: 1 });
    const negative = await rpc('GetTask', { id: task.id, historyLength: -1 });
    assert.equal(negative.error.code, -32602);
    assert.match(negative.error.message, /historyLength/);
    const none = (await rpc('GetTask', { id: task.id, historyLength: 0 })).result;
    assert.equal(none.id, task.id);
    assert.equal(none.history, undefined);
    // The history is the one message the task had: the caller's input.
    const one = (await rpc('GetTask', { id: task.id, historyLength: 1 })).result;
    assert.equal(one.history.length, 1);
    assert.equal(one.history[0].role, 'ROLE_USER');
    assert.deepEqual(one.history[0].parts[0].data, { text: 'h' });
  });

  test('CancelTask: unknown -32001, ended or open -32002 TaskNotCancelable, and the task runs on', async () => {
    assert.equal((await rpc('CancelTask', { id: randomUUID() })).error.code, -32001);
    const ended = await invoke({ text: 'c' }, { ok: 1 });
    const notCancelable = await rpc('CancelTask', { id: ended.id });
    assert.equal(notCancelable.error.code, -32002);
    assert.equal((await rpc('CancelTask', { id: ended.id }, stranger)).error.code, -32001);
    // Through the official client too.
    await assert.rejects(
      client.cancelTask({ tenant: '', id: ended.id, metadata: undefined }, auth()),
      /has ended/,
    );

    // An open task: the SendMessage is still waiting while the agent holds the task.
    const sending = rpc('SendMessage', { message: dataMessage({ text: 'slow' }) });
    let polled: Json[] = [];
    while (polled.length === 0) {
      polled = (await http(registry, 'GET', '/api/agent/tasks?wait=10', worker.token)).body.tasks as Json[];
    }
    const open = polled[0].task_id as string;
    const refused = await rpc('CancelTask', { id: open });
    assert.equal(refused.error.code, -32002);
    assert.match(refused.error.message, /is open/);
    await http(registry, 'POST', `/api/agent/tasks/${open}/accept`, worker.token);
    await http(registry, 'POST', `/api/agent/tasks/${open}/result`, worker.token, { output: { late: true } });
    const sent = await sending;
    assert.equal(sent.result.task.status.state, 'TASK_STATE_COMPLETED');
  });

  test('ListTasks: the caller’s tasks with this agent, newest first, paged and filtered', async () => {
    const lister = await register(registry);
    const as = lister;
    const listRpc = (params: Record<string, unknown>, who: Registered = as) => rpc('ListTasks', params, who);
    const ids: string[] = [];
    for (const [index, answer] of [{ n: 1 }, 'it broke', { n: 3 }].entries()) {
      const served = worker.serveOne(() => answer);
      const sent = await rpc('SendMessage', { message: dataMessage({ index }) }, as);
      await served;
      ids.push(sent.result.task.id as string);
    }
    const all = (await listRpc({})).result;
    assert.deepEqual(
      all.tasks.map((task: Json) => task.id),
      [...ids].reverse(),
    );
    assert.equal(all.nextPageToken, '');
    assert.equal(all.totalSize, 3);
    assert.equal(all.pageSize, 3);
    assert.equal(all.tasks[0].artifacts, undefined, 'no artifacts unless includeArtifacts');

    const first = (await listRpc({ pageSize: 2 })).result;
    assert.deepEqual(
      first.tasks.map((task: Json) => task.id),
      [ids[2], ids[1]],
    );
    assert.notEqual(first.nextPageToken, '');
    const second = (await listRpc({ pageSize: 2, pageToken: first.nextPageToken })).result;
    assert.deepEqual(
      second.tasks.map((task: Json) => task.id),
      [ids[0]],
    );
    assert.equal(second.nextPageToken, '');

    const failed = (await listRpc({ status: 'TASK_STATE_FAILED' })).result;
    assert.deepEqual(
      failed.tasks.map((task: Json) => task.id),
      [ids[1]],
    );
    assert.deepEqual((await listRpc({ status: 'TASK_STATE_CANCELED' })).result.tasks, []);
    const byContext = (await listRpc({ contextId: ids[0], includeArtifacts: true })).result;
    assert.deepEqual(byContext.tasks[0].artifacts[0].parts[0].data, { n: 1 });
    assert.deepEqual((await listRpc({ statusTimestampAfter: '2999-01-01T00:00:00Z' })).result.tasks, []);
    assert.equal((await listRpc({ statusTimestampAfter: '2000-01-01T00:00:00Z' })).result.tasks.length, 3);

    // Nobody else's tasks, and not those with another agent.
    assert.deepEqual((await listRpc({}, stranger)).result.tasks, []);
    const official = await client.listTasks(
      {
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: undefined,
        pageSize: 1,
      },
      { serviceParameters: { authorization: `Bearer ${lister.token}` } },
    );
    assert.deepEqual(
      official.tasks.map((task: Task) => task.id),
      [ids[2]],
    );

    for (const bad of [
      { pageSize: 0 },
      { pageSize: 101 },
      { pageSize: 2.5 },
      { pageToken: 'not-a-token' },
      { status: 'TASK_STATE_DONE' },
      { statusTimestampAfter: 'yesterday' },
      { statusTimestampAfter: '-1' },
      { historyLength: -1 },
    ]) {
      const refused = await listRpc(bad);
      assert.equal(refused.error?.code, -32602, JSON.stringify({ bad, refused }));
    }
  });
});
