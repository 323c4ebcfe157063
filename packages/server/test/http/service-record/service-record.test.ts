import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LATENCY_BUCKET_COUNT as MIGRATED_BUCKETS } from '../../../src/db/migrations/007-trust.js';
import {
  LATENCY_BUCKET_COUNT,
  histogramQuantile,
  latencyBucket,
  summariseWindow,
} from '../../../src/modules/service-record/service-record-model.js';
import { agentPath, bearer, defaultProfile, ed25519Agent } from '@agent-registry/testkit';
import { register, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { bearerInject, startWithAgent, enableQueue } from '../../support/registry-setup.js';

describe('service record model (pure)', () => {
  test('the migration made one column per latency bucket', () => {
    assert.equal(MIGRATED_BUCKETS, LATENCY_BUCKET_COUNT);
  });

  test('buckets and quantiles from the histogram', () => {
    assert.equal(latencyBucket(0), 0);
    assert.equal(latencyBucket(50), 0);
    assert.equal(latencyBucket(51), 1);
    assert.equal(latencyBucket(999_999), LATENCY_BUCKET_COUNT - 1);
    const histogram = new Array<number>(LATENCY_BUCKET_COUNT).fill(0);
    assert.equal(histogramQuantile(histogram, 0.5), null);
    histogram[3] = 10; // 200-500 ms
    // Median: half-way through the bucket; p95: 95% of the way.
    assert.equal(histogramQuantile(histogram, 0.5), 350);
    assert.equal(histogramQuantile(histogram, 0.95), 485);
    histogram[LATENCY_BUCKET_COUNT - 1] = 90; // 90 % slower than the last edge
    assert.equal(histogramQuantile(histogram, 0.95), 120_000);
  });

  test('a window counts only its days and computes the rates', () => {
    const latency = new Array<number>(LATENCY_BUCKET_COUNT).fill(0);
    const rollups = [
      { day: 100, completed: 3, failed: 1, timeout: 0, lastCompletedAt: 100, latency },
      { day: 94, completed: 0, failed: 0, timeout: 4, lastCompletedAt: null, latency },
      { day: 93, completed: 9, failed: 0, timeout: 0, lastCompletedAt: 93, latency }, // outside 7 days
    ];
    const week = summariseWindow(rollups, 100, 7, 2);
    assert.equal(week.invocations, 8);
    assert.equal(week.success_rate, 0.375);
    assert.equal(week.timeout_rate, 0.5);
    assert.equal(week.last_completed_at, 100);
    assert.equal(week.distinct_callers, 2);
    assert.equal(summariseWindow(rollups, 100, 30, 0).invocations, 17);
  });
});

describe('service record through the broker', () => {
  let registry: TestRegistry;
  let caller: Registered;
  let otherCaller: Registered;
  let worker: Registered;
  before(async () => {
    ({ registry, agent: caller } = await startWithAgent());
    otherCaller = await register(registry);
    worker = await register(registry, undefined, {
      name: 'Worker',
      capabilities: [{ type: 'echo' }, { type: 'sum' }] as never,
    });
    await enableQueue(registry, worker);
  });
  after(() => registry.close());

  const inject = bearerInject(() => registry);

  /** One invocation that the worker answers after `latencyMs` of registry time. */
  async function call(
    from: Registered,
    outcome: 'completed' | 'failed' | 'timeout',
    latencyMs = 300,
    capability = 'echo',
    target: Registered = worker,
  ): Promise<string> {
    const pending = inject('POST', '/api/invoke', from.token, {
      target_did: target.did,
      capability,
      input: {},
      timeout_ms: outcome === 'timeout' ? 100 : 10_000,
    });
    const polled = await inject('GET', '/api/agent/tasks?wait=5', target.token);
    const task = polled.json<{ tasks: { task_id: string }[] }>().tasks[0];
    assert.ok(task);
    if (outcome !== 'timeout') {
      registry.clock.advance(latencyMs);
      const path = `/api/agent/tasks/${task.task_id}/${outcome === 'completed' ? 'result' : 'fail'}`;
      const body = outcome === 'completed' ? { output: {} } : { error: 'no' };
      assert.equal((await inject('POST', path, target.token, body)).statusCode, 200);
    }
    const response = await pending;
    assert.equal(response.statusCode, { completed: 200, failed: 502, timeout: 504 }[outcome], response.body);
    return task.task_id;
  }

  const profile = async (did: string) => (await registry.app.inject({ url: agentPath(did) })).json();

  test('an agent never called has an empty record', async () => {
    const record = (await profile(caller.did)).service_record;
    assert.equal(record.measured_by, 'registry');
    assert.equal(record.last_30_days.invocations, 0);
    assert.equal(record.last_30_days.success_rate, null);
    assert.equal(record.all_time.invocations, 0);
    assert.deepEqual(record.capabilities, []);
    // The profile skips the record's reads for such an agent; what it answers is what the reads give.
    const { serviceRecord } = registry.ctx;
    const { uptime_24h, uptime_7d, ...read } = record;
    assert.deepEqual(read, await serviceRecord.get(registry.ctx.database.db, caller.did));
    // Uptime joins the record from availability: never observed, so none rather than 100 %.
    assert.equal(uptime_24h, null);
    assert.equal(uptime_7d, null);
  });

  test('completed, failed and timed-out calls count; latency and distinct callers are measured', async () => {
    await call(caller, 'completed', 300);
    await call(caller, 'completed', 300);
    await call(otherCaller, 'completed', 700, 'sum');
    await call(caller, 'failed');
    await call(otherCaller, 'timeout');
    const record = (await profile(worker.did)).service_record;
    const month = record.last_30_days;
    assert.equal(month.invocations, 5);
    assert.equal(month.completed, 3);
    assert.equal(month.failed, 1);
    assert.equal(month.timeouts, 1);
    assert.equal(month.success_rate, 0.6);
    assert.equal(month.timeout_rate, 0.2);
    assert.equal(month.distinct_callers, 2);
    assert.ok(month.latency_p50_ms > 200 && month.latency_p50_ms <= 500, String(month.latency_p50_ms));
    assert.ok(month.latency_p95_ms > 500 && month.latency_p95_ms <= 1000, String(month.latency_p95_ms));
    assert.equal(typeof month.last_completed_at, 'number');
    assert.deepEqual(record.last_7_days, { ...month, days: 7 });
    assert.equal(record.all_time.invocations, 5);
    const echo = record.capabilities.find((entry: { capability: string }) => entry.capability === 'echo');
    assert.equal(echo.last_30_days.invocations, 4);
    assert.equal(echo.last_30_days.completed, 2);
    assert.equal(echo.last_30_days.distinct_callers, 2);
    const sum = record.capabilities.find((entry: { capability: string }) => entry.capability === 'sum');
    assert.equal(sum.last_30_days.distinct_callers, 1);
  });

  test('calls by the agent itself or by a linked identity do not count', async () => {
    const before = (await profile(worker.did)).service_record.all_time.invocations;
    await call(worker, 'completed');
    assert.equal((await profile(worker.did)).service_record.all_time.invocations, before);
    // An identity linked to the worker (registered with it as referrer) does not count either.
    const sibling = await register(registry, ed25519Agent(), defaultProfile(), { referrer: worker.did });
    await call(sibling, 'completed');
    assert.equal((await profile(worker.did)).service_record.all_time.invocations, before);
  });

  test('every node reads the same record, and a call finished on another node counts at once', async () => {
    const { startSecondNode } = await import('../../support/discovery-helpers.js');
    const second = await startSecondNode(registry);
    try {
      const fromSecond = async () =>
        (await second.app.inject({ url: agentPath(worker.did) })).json().service_record;
      assert.deepEqual(await fromSecond(), (await profile(worker.did)).service_record);
      const before = (await profile(worker.did)).service_record.all_time.completed;
      const pending = second.app.inject({
        method: 'POST',
        url: '/api/invoke',
        headers: bearer(caller.token),
        payload: { target_did: worker.did, capability: 'echo', input: {}, timeout_ms: 10_000 },
      });
      const polled = await second.app.inject({
        url: '/api/agent/tasks?wait=5',
        headers: bearer(worker.token),
      });
      const task = polled.json<{ tasks: { task_id: string }[] }>().tasks[0];
      assert.ok(task);
      const done = await second.app.inject({
        method: 'POST',
        url: `/api/agent/tasks/${task.task_id}/result`,
        headers: bearer(worker.token),
        payload: { output: {} },
      });
      assert.equal(done.statusCode, 200);
      assert.equal((await pending).statusCode, 200);
      assert.equal((await profile(worker.did)).service_record.all_time.completed, before + 1);
    } finally {
      await second.close();
    }
  });

  test('search sorts by success rate and latency and filters by success rate', async () => {
    const slow = await register(registry, undefined, {
      name: 'Slow',
      capabilities: [{ type: 'echo' }] as never,
    });
    const configured = await registry.app.inject({
      method: 'PUT',
      url: agentPath(slow.did, '/invocation'),
      headers: bearer(slow.token),
      payload: { enabled: true, delivery_mode: 'queue' },
    });
    assert.equal(configured.statusCode, 200);
    await call(caller, 'completed', 4000, 'echo', slow);
    const dids = async (query: string) =>
      (await registry.app.inject({ url: `/api/agents/search?${query}` }))
        .json()
        .agents.map((agent: { did: string }) => agent.did);
    // slow: 1/1 at ~4 s; worker: 4/6 at ~300 ms; every other agent is unmeasured and comes last.
    assert.deepEqual(await dids('sort=success_rate&limit=2'), [slow.did, worker.did]);
    assert.deepEqual(await dids('sort=success_rate&order=asc&limit=2'), [worker.did, slow.did]);
    assert.deepEqual(await dids('sort=latency&limit=2'), [worker.did, slow.did]);
    assert.deepEqual(await dids('sort=latency&capability=echo&limit=2'), [worker.did, slow.did]);
    assert.deepEqual(await dids('min_success_rate=0.9'), [slow.did]);
    assert.deepEqual(await dids('min_success_rate=0.5&sort=created_at&order=asc'), [worker.did, slow.did]);
    assert.deepEqual(await dids('q=worker&min_success_rate=0.5'), [worker.did]);
    const bad = await registry.app.inject({ url: '/api/agents/search?min_success_rate=2' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'VALIDATION_FAILED');
  });

  test('the window slides: after 8 days the 7-day window is empty, the 30-day one is not', async () => {
    registry.clock.advance(8 * 24 * 60 * 60 * 1000);
    await registry.ctx.serviceRecord.refreshAll();
    const record = (await profile(worker.did)).service_record;
    assert.equal(record.last_7_days.invocations, 0);
    assert.equal(record.last_30_days.invocations, 6);
    const search = await registry.app.inject({ url: '/api/agents/search?active_within_days=7' });
    assert.equal(search.json().total, 0);
    const month = await registry.app.inject({ url: '/api/agents/search?active_within_days=30' });
    assert.equal(month.json().total, 2, 'the worker and the slow agent answered within 30 days');
    registry.clock.advance(30 * 24 * 60 * 60 * 1000);
    await registry.ctx.serviceRecord.refreshAll();
    const later = (await profile(worker.did)).service_record;
    assert.equal(later.last_30_days.invocations, 0);
    assert.equal(later.all_time.invocations, 6, 'older days live on in the all-time totals');
  });
});
