import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { http } from '../../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
} from '../../../support/faces-helpers.js';

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

describe('A2A GetTask: a task of someone else is indistinguishable from no task', () => {
  let registry: ListeningRegistry;
  let creator: Registered;
  let stranger: Registered;
  let base: string;
  let taskId: string;

  const getTask = async (token: string, id: string, at = base): Promise<RpcError> => {
    const response = await fetch(at, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { error?: RpcError };
    assert.ok(body.error !== undefined, JSON.stringify(body));
    return body.error;
  };

  before(async () => {
    registry = await startListeningRegistry();
    creator = await register(registry);
    stranger = await register(registry);
    const worker = await queueWorker(registry, { name: 'Echo', capabilities: [{ type: 'echo' }] });
    base = `${registry.url}/a2a/${encodeURIComponent(worker.did)}/`;
    const served = worker.serveOne((input) => input);
    const invoked = await http(registry, 'POST', '/api/invoke', creator.token, {
      target_did: worker.did,
      capability: 'echo',
      input: { a: 1 },
    });
    assert.equal(invoked.status, 200, JSON.stringify(invoked.body));
    taskId = await served;
  });
  after(() => registry?.close());

  test("another caller's task and an unknown id get the same error, word for word", async () => {
    const unknownId = randomUUID();
    const othersTask = await getTask(stranger.token, taskId);
    const unknown = await getTask(stranger.token, unknownId);
    assert.equal(othersTask.code, -32001);
    assert.deepEqual(
      { ...othersTask, message: othersTask.message.replace(taskId, '<id>') },
      { ...unknown, message: unknown.message.replace(unknownId, '<id>') },
    );
    // Only the structured status: the message names a DID whose port may itself contain "403".
    assert.doesNotMatch(JSON.stringify(othersTask), /NOT_TASK_CREATOR|"http_status":"403"|another agent/);
    assert.match(JSON.stringify(othersTask), /"http_status":"404"/);
  });

  test("the creator's task asked at another agent's base answers the same as well", async () => {
    const elsewhere = await queueWorker(registry, { name: 'Other', capabilities: [{ type: 'echo' }] });
    const otherBase = `${registry.url}/a2a/${encodeURIComponent(elsewhere.did)}/`;
    const unknownId = randomUUID();
    const misplaced = await getTask(creator.token, taskId, otherBase);
    const unknown = await getTask(creator.token, unknownId, otherBase);
    assert.deepEqual(
      { ...misplaced, message: misplaced.message.replace(taskId, '<id>') },
      { ...unknown, message: unknown.message.replace(unknownId, '<id>') },
    );
  });
});
