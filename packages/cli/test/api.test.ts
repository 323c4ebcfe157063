import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseJson, runCli, startRegistry, tempHome, type RunningRegistry } from './harness.js';

describe('agent-registry api: any route with the saved token', () => {
  let registry: RunningRegistry;
  const home = tempHome();
  const cli = (...args: string[]) => runCli([...args, '--registry', registry.url], { home });
  let did = '';

  before(async () => {
    registry = await startRegistry();
    assert.equal((await cli('init', '--name', 'Raw caller', '--capability', 'echo')).code, 0);
    const registered = await cli('register', '--json');
    assert.equal(registered.code, 0, registered.stderr);
    did = parseJson<{ did: string }>(registered).did;
  });
  after(async () => {
    await registry.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('GET a route that needs the token, with a query', async () => {
    const mine = await cli('api', 'GET', '/api/reviews/my?limit=5');
    assert.equal(mine.code, 0, mine.stderr);
    assert.equal(parseJson<{ total: number }>(mine).total, 0);
    const tasks = await cli('api', 'get', '/api/agent/tasks?wait=0');
    assert.equal(tasks.code, 0, tasks.stderr);
    assert.deepEqual(parseJson<{ tasks: unknown[] }>(tasks).tasks, []);
  });

  it('PUT with --data, and the answer as the registry gave it', async () => {
    const put = await cli(
      'api',
      'PUT',
      `/api/agents/${encodeURIComponent(did)}/invocation`,
      '--data',
      '{"enabled": true, "delivery_mode": "queue"}',
    );
    assert.equal(put.code, 0, put.stderr);
    assert.equal(parseJson<{ delivery_mode: string }>(put).delivery_mode, 'queue');
  });

  it('--anonymous sends no token; a 401 exits 4 with its code; bad input exits 2', async () => {
    const health = await cli('api', 'GET', '/healthz', '--anonymous');
    assert.equal(health.code, 0, health.stderr);
    assert.equal(parseJson<{ status: string }>(health).status, 'ok');
    const refused = await cli('api', 'GET', '/api/reviews/my', '--anonymous');
    assert.equal(refused.code, 4, 'not logged in: the exit code of a 401');
    assert.match(refused.stderr, /TOKEN_MISSING|401/);
    assert.equal((await cli('api', 'FETCH', '/healthz')).code, 2);
    assert.equal((await cli('api', 'GET', 'https://elsewhere.example/')).code, 2);
    assert.equal((await cli('api', 'POST', '/api/reviews', '--data', '{nope')).code, 2);
  });
});
