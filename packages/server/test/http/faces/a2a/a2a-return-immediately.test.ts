import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { agentPath } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { http } from '../../../support/http.js';
import { startListeningRegistry, type ListeningRegistry } from '../../../support/faces-helpers.js';

/** JSON-RPC answers, read as loose JSON in assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('A2A face: returnImmediately, working-state listing, history and the error codes', () => {
  let registry: ListeningRegistry;
  let caller: Registered;
  let echo: Registered;
  let base: string;

  const post = async (method: string, params: Record<string, unknown>, version: string | null = '1.0') => {
    const response = await fetch(base, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${caller.token}`,
        ...(version === null ? {} : { 'a2a-version': version }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    assert.equal(response.status, 200);
    return (await response.json()) as Json;
  };
  const textMessage = (text: string, extra: Record<string, unknown> = {}) => ({
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...extra,
  });
  /** The worker's side, one step at a time: take the next task, accept it, answer it. */
  const take = async (): Promise<string> => {
    const polled = await http(registry, 'GET', '/api/agent/tasks?wait=5', echo.token);
    const [task] = polled.body.tasks as { task_id: string }[];
    assert.ok(task, JSON.stringify(polled.body));
    return task.task_id;
  };
  const accept = async (taskId: string) =>
    assert.equal((await http(registry, 'POST', `/api/agent/tasks/${taskId}/accept`, echo.token)).status, 200);
  const answer = async (taskId: string, output: Record<string, unknown>) =>
    assert.equal(
      (await http(registry, 'POST', `/api/agent/tasks/${taskId}/result`, echo.token, { output })).status,
      200,
    );
  const state = async (id: string) => (await post('GetTask', { id })).result.status.state as string;

  before(async () => {
    registry = await startListeningRegistry();
    caller = await register(registry);
    echo = await register(registry, undefined, {
      name: 'Echo',
      capabilities: [
        {
          type: 'echo',
          input_schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
        },
      ],
    });
    const config = await http(registry, 'PUT', agentPath(echo.did, '/invocation'), echo.token, {
      enabled: true,
      delivery_mode: 'queue',
    });
    assert.equal(config.status, 200);
    base = `${registry.url}/a2a/${encodeURIComponent(echo.did)}/`;
  });
  after(() => registry?.close());

  test('returnImmediately answers the submitted task at once; GetTask and ListTasks show it working, then completed', async () => {
    const sent = await post('SendMessage', {
      message: textMessage('hello'),
      configuration: { returnImmediately: true },
    });
    const task = sent.result?.task;
    assert.ok(task, JSON.stringify(sent));
    assert.equal(task.status.state, 'TASK_STATE_SUBMITTED');
    assert.equal(task.contextId, task.id);
    assert.equal(task.artifacts, undefined);
    // The history holds the one message the task had: the input, as a data part.
    assert.equal(task.history.length, 1);
    assert.deepEqual(task.history[0].parts[0].data, { text: 'hello' });
    assert.equal(task.history[0].role, 'ROLE_USER');

    const taskId = await take();
    assert.equal(taskId, task.id);
    assert.equal(await state(taskId), 'TASK_STATE_SUBMITTED');
    await accept(taskId);
    assert.equal(await state(taskId), 'TASK_STATE_WORKING');
    const working = await post('ListTasks', { status: 'TASK_STATE_WORKING' });
    assert.deepEqual(
      working.result.tasks.map((listed: Json) => [listed.id, listed.status.state]),
      [[taskId, 'TASK_STATE_WORKING']],
    );
    const submitted = await post('ListTasks', { status: 'TASK_STATE_SUBMITTED' });
    assert.deepEqual(submitted.result.tasks, []);

    await answer(taskId, { text: 'hello' });
    const done = (await post('GetTask', { id: taskId, historyLength: 1 })).result;
    assert.equal(done.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(done.artifacts[0].parts[0].data, { text: 'hello' });
    assert.equal(done.history.length, 1);
    assert.equal((await post('ListTasks', { status: 'TASK_STATE_WORKING' })).result.tasks.length, 0);
  });

  test('historyLength applies to what SendMessage, GetTask and ListTasks return', async () => {
    const sent = await post('SendMessage', {
      message: textMessage('quiet'),
      configuration: { returnImmediately: true, historyLength: 0 },
    });
    const id = sent.result.task.id as string;
    assert.equal(sent.result.task.history, undefined, 'historyLength 0: no history');
    assert.equal((await post('GetTask', { id, historyLength: 0 })).result.history, undefined);
    assert.equal((await post('GetTask', { id })).result.history.length, 1);
    const listed = async (params: Record<string, unknown>) =>
      (await post('ListTasks', { contextId: id, ...params })).result.tasks[0];
    assert.equal((await listed({})).history, undefined, 'ListTasks leaves history out by default');
    assert.deepEqual((await listed({ historyLength: 3 })).history[0].parts[0].data, { text: 'quiet' });
    await answer(await take(), { text: 'quiet' });

    const negative = await post('SendMessage', {
      message: textMessage('x'),
      configuration: { returnImmediately: true, historyLength: -1 },
    });
    assert.equal(negative.error?.code, -32602, JSON.stringify(negative));
    assert.match(negative.error.message, /historyLength must be an integer of 0 or more/);
  });

  test('a blocking SendMessage still waits for the end, and carries the history', async () => {
    const sending = post('SendMessage', { message: textMessage('wait') });
    const taskId = await take();
    await accept(taskId);
    await answer(taskId, { text: 'waited' });
    const task = (await sending).result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task.artifacts[0].parts[0].data, { text: 'waited' });
    assert.deepEqual(task.history[0].parts[0].data, { text: 'wait' });
  });

  test('the official client: returnImmediately gives a task in the submitted state', async () => {
    const client = await new ClientFactory().createFromUrl(base);
    const auth = { serviceParameters: { authorization: `Bearer ${caller.token}` } };
    const sent = await client.sendMessage(
      {
        tenant: '',
        message: {
          messageId: randomUUID(),
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [
            { content: { $case: 'text', value: 'sdk' }, metadata: undefined, filename: '', mediaType: '' },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          returnImmediately: true,
        },
        metadata: undefined,
      },
      auth,
    );
    assert.ok('status' in sent);
    assert.equal(sent.status?.state, TaskState.TASK_STATE_SUBMITTED);
    const taskId = await take();
    assert.equal(taskId, sent.id);
    await accept(taskId);
    const read = await client.getTask({ tenant: '', id: taskId }, auth);
    assert.equal(read.status?.state, TaskState.TASK_STATE_WORKING);
    await answer(taskId, { text: 'sdk' });
  });

  test('A2A 0.3: blocking false returns at once; tasks/get shows the move', async () => {
    const legacy = await post(
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'user',
          parts: [{ kind: 'text', text: 'old' }],
        },
        configuration: { blocking: false },
      },
      null,
    );
    assert.equal(legacy.result?.kind, 'task', JSON.stringify(legacy));
    assert.equal(legacy.result.status.state, 'submitted');
    const taskId = await take();
    assert.equal(taskId, legacy.result.id);
    await accept(taskId);
    const read = await post('tasks/get', { id: taskId }, null);
    assert.equal(read.result.status.state, 'working');
    await answer(taskId, { text: 'old' });
    assert.equal((await post('tasks/get', { id: taskId }, null)).result.status.state, 'completed');
  });

  test('a text part beside a data part fills the one required string property the data lacks', async () => {
    const sent = await post('SendMessage', {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'joined' }, { data: { note: 'extra' } }],
      },
      configuration: { returnImmediately: true },
    });
    assert.deepEqual(sent.result.task.history[0].parts[0].data, { note: 'extra', text: 'joined' });
    await answer(await take(), { text: 'joined' });
    // The data part's own value wins over the text.
    const own = await post('SendMessage', {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'no' }, { data: { text: 'yes' } }],
      },
      configuration: { returnImmediately: true },
    });
    assert.deepEqual(own.result.task.history[0].parts[0].data, { text: 'yes' });
    await answer(await take(), { text: 'yes' });
  });

  test('push is unsupported (-32003) in both dialects and in SendMessage; the extended card is UnsupportedOperation (-32004)', async () => {
    const push = await post('SendMessage', {
      message: textMessage('x'),
      configuration: { taskPushNotificationConfig: { url: 'https://hooks.example/a2a' } },
    });
    assert.equal(push.error?.code, -32003, JSON.stringify(push));
    assert.match(push.error.message, /push notifications are not supported/);
    for (const [method, params] of [
      ['CreateTaskPushNotificationConfig', { taskId: 'x', url: 'https://hooks.example/a2a' }],
      ['GetTaskPushNotificationConfig', { taskId: 'x', id: 'y' }],
      ['ListTaskPushNotificationConfigs', { taskId: 'x' }],
      ['DeleteTaskPushNotificationConfig', { taskId: 'x', id: 'y' }],
    ] as const) {
      assert.equal((await post(method, params)).error?.code, -32003, method);
    }
    const legacyPush = await post(
      'tasks/pushNotificationConfig/set',
      { taskId: 'x', pushNotificationConfig: { url: 'https://hooks.example/a2a' } },
      null,
    );
    assert.equal(legacyPush.error?.code, -32003, JSON.stringify(legacyPush));
    const extended = await post('GetExtendedAgentCard', {});
    assert.equal(extended.error?.code, -32004, JSON.stringify(extended));
    // Nothing was created by the refused push request.
    const queued = await http(registry, 'GET', '/api/agent/tasks?wait=0', echo.token);
    assert.deepEqual(queued.body.tasks, []);
  });
});
