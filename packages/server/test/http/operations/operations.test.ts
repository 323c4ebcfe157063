import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/kernel/config.js';
import { createContext } from '../../../src/context.js';
import {
  TestClock,
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import {
  agentPath,
  bearer,
  createTestDatabase,
  ed25519Agent,
  registrationBody,
  secp256k1Agent,
  defaultProfile,
  testDatabase,
  type TestDatabase,
} from '@agent-registry/testkit';
import { bearerInject } from '../../support/registry-setup.js';

type Line = Record<string, unknown>;

/** A registry whose request and domain-event log lines are collected. */
async function loggedRegistry(env: Record<string, string> = {}): Promise<TestRegistry & { lines: Line[] }> {
  const database: TestDatabase = await createTestDatabase();
  const lines: Line[] = [];
  const stream = { write: (text: string) => void lines.push(JSON.parse(text) as Line) };
  const config = loadConfig({
    DATABASE_URL: database.url,
    PUBLIC_URL: 'http://localhost:8080',
    LOG_LEVEL: 'info',
    ...env,
  });
  const clock = new TestClock();
  const ctx = await createContext(config, { clock, logStream: stream });
  const app = await buildApp(ctx, { logStream: stream });
  await app.ready();
  return {
    app,
    ctx,
    clock,
    config,
    database,
    lines,
    close: async () => {
      await app.close();
      await ctx.close();
      await database.drop();
    },
  };
}

/** The value of one series in the Prometheus text, or undefined when absent. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics, request log lines and domain events', () => {
  let registry: TestRegistry & { lines: Line[] };
  let caller: Registered;
  let worker: Registered;
  let failingWebhook: http.Server;

  const inject = bearerInject(() => registry);
  const metrics = async (): Promise<string> => {
    const response = await inject('GET', '/metrics');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return response.body;
  };

  before(async () => {
    registry = await loggedRegistry({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    caller = await register(registry);
    worker = await register(registry, ed25519Agent(), {
      name: 'Worker',
      capabilities: [{ type: 'echo' }],
    });
    const queue = await inject('PUT', agentPath(worker.did, '/invocation'), worker.token, {
      enabled: true,
      delivery_mode: 'queue',
    });
    assert.equal(queue.statusCode, 200, queue.body);
    failingWebhook = http.createServer((_request, response) => response.writeHead(500).end('broken'));
    await new Promise<void>((resolve) => failingWebhook.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    failingWebhook.close();
    await registry.close();
  });

  test('invocations by outcome and delivery mode, open tasks and long-poll waiters', async () => {
    const poll = inject('GET', '/api/agent/tasks?wait=10', worker.token);
    for (let i = 0; i < 100 && sample(await metrics(), 'registry_long_poll_waiters') !== 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(sample(await metrics(), 'registry_long_poll_waiters'), 1);

    const completed = inject('POST', '/api/invoke', caller.token, {
      target_did: worker.did,
      capability: 'echo',
      input: { n: 1 },
    });
    const task = (await poll).json<{ tasks: { task_id: string }[] }>().tasks[0];
    assert.ok(task);
    const during = await metrics();
    assert.equal(sample(during, 'registry_long_poll_waiters'), 0);
    assert.equal(sample(during, 'registry_tasks_open'), 1);
    await inject('POST', `/api/agent/tasks/${task.task_id}/accept`, worker.token);
    await inject('POST', `/api/agent/tasks/${task.task_id}/result`, worker.token, { output: { ok: true } });
    assert.equal((await completed).statusCode, 200);

    const failed = inject('POST', '/api/invoke', caller.token, {
      target_did: worker.did,
      capability: 'echo',
      input: { n: 2 },
    });
    const second = (await inject('GET', '/api/agent/tasks?wait=10', worker.token)).json<{
      tasks: { task_id: string }[];
    }>().tasks[0];
    assert.ok(second);
    await inject('POST', `/api/agent/tasks/${second.task_id}/fail`, worker.token, { error: 'no' });
    assert.equal((await failed).statusCode, 502);

    const timedOut = await inject('POST', '/api/invoke', caller.token, {
      target_did: worker.did,
      capability: 'echo',
      input: { n: 3 },
      timeout_ms: 1000,
    });
    assert.equal(timedOut.statusCode, 504);

    const hook = await register(registry, ed25519Agent(), { name: 'Hook', capabilities: [{ type: 'echo' }] });
    const { port } = failingWebhook.address() as AddressInfo;
    const configured = await inject('PUT', agentPath(hook.did, '/invocation'), hook.token, {
      enabled: true,
      delivery_mode: 'webhook',
      webhook_url: `http://127.0.0.1:${port}/task`,
    });
    assert.equal(configured.statusCode, 200, configured.body);
    const webhookFailed = await inject('POST', '/api/invoke', caller.token, {
      target_did: hook.did,
      capability: 'echo',
      input: {},
    });
    assert.equal(webhookFailed.json().code, 'WEBHOOK_FAILED');

    const text = await metrics();
    assert.equal(sample(text, 'registry_invocations_total{outcome="completed",delivery="queue"}'), 1);
    assert.equal(sample(text, 'registry_invocations_total{outcome="failed",delivery="queue"}'), 1);
    assert.equal(sample(text, 'registry_invocations_total{outcome="timeout",delivery="queue"}'), 1);
    assert.equal(sample(text, 'registry_invocations_total{outcome="webhook_failed",delivery="webhook"}'), 1);
    assert.equal(
      sample(text, 'registry_invocation_duration_seconds_count{outcome="timeout",delivery="queue"}'),
      1,
    );
    assert.equal(sample(text, 'registry_webhook_deliveries_total{outcome="failed"}'), 1);
    assert.equal(sample(text, 'registry_tasks_open'), 0);

    const ended = registry.lines.filter((line) => line.event === 'invocation_ended');
    assert.deepEqual(ended.map((line) => [line.outcome, line.delivery]).sort(), [
      ['completed', 'queue'],
      ['failed', 'queue'],
      ['timeout', 'queue'],
      ['webhook_failed', 'webhook'],
    ]);
    for (const line of ended) {
      assert.equal(line.level, 30);
      assert.equal(typeof line.durationMs, 'number');
      assert.equal(line.callerDid, caller.did);
    }
  });

  test("another agent's failure or timeout is logged at info, as MCP and A2A log it; the registry's own fault at error", async () => {
    // The invocations of the test above: completed, failed, timed out, webhook failed.
    const invokes = registry.lines.filter((line) => line.route === '/api/invoke' && 'status' in line);
    assert.deepEqual(invokes.map((line) => [line.status, line.code ?? null, line.level]).sort(), [
      [200, null, 30],
      [502, 'AGENT_ERROR', 30],
      [502, 'WEBHOOK_FAILED', 30],
      [504, 'INVOCATION_TIMEOUT', 30],
    ]);
    assert.deepEqual(
      registry.lines.filter((line) => Number(line.level) >= 50),
      [],
      'no error line for outcomes of other agents',
    );
    const stats = registry.ctx.stats;
    const original = stats.get.bind(stats);
    stats.get = () => Promise.reject(new Error('a fault of the registry'));
    try {
      assert.equal((await inject('GET', '/api/stats')).statusCode, 500);
    } finally {
      stats.get = original;
    }
    const line = registry.lines.find(
      (candidate) => candidate.route === '/api/stats' && 'status' in candidate,
    );
    assert.equal(line?.level, 50);
    assert.equal(line?.code, 'INTERNAL_ERROR');
  });

  test('registrations, reviews and deactivations: counted and logged at info', async () => {
    const before = await metrics();
    const ethereum = await register(registry, secp256k1Agent());
    const reviewed = await inject('POST', '/api/reviews', caller.token, {
      target_did: ethereum.did,
      rating: 8.5,
    });
    assert.equal(reviewed.statusCode, 201, reviewed.body);
    const gone = await inject('DELETE', agentPath(ethereum.did), ethereum.token);
    assert.equal(gone.statusCode, 200, gone.body);

    const text = await metrics();
    const grew = (series: string) => (sample(text, series) ?? 0) - (sample(before, series) ?? 0);
    assert.equal(grew('registry_registrations_total{key_type="secp256k1"}'), 1);
    assert.equal(grew('registry_reviews_total{verified="false"}'), 1);
    assert.equal(grew('registry_deactivations_total'), 1);
    assert.equal(grew('http_requests_total{route="/api/reviews",method="POST",status="201"}'), 1);
    assert.equal(
      grew('http_request_duration_seconds_count{route="/api/reviews",method="POST",status="201"}'),
      1,
    );
    assert.ok(
      sample(
        text,
        'http_request_duration_seconds_bucket{le="+Inf",route="/api/reviews",method="POST",status="201"}',
      ),
    );

    const events = (name: string) => registry.lines.filter((line) => line.event === name);
    assert.ok(
      events('agent_registered').some((line) => line.did === ethereum.did && line.keyType === 'secp256k1'),
    );
    assert.ok(
      events('review_submitted').some(
        (line) => line.targetDid === ethereum.did && line.reviewerDid === caller.did,
      ),
    );
    assert.ok(events('agent_deactivated').some((line) => line.did === ethereum.did));
  });

  test('process, event-loop and build metrics; no raw URLs in labels', async () => {
    await inject('GET', agentPath(caller.did));
    await inject('GET', '/no/such/route/12345');
    const text = await metrics();
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      assert.match(text, new RegExp(`^${name} `, 'm'), name);
    assert.match(text, /^registry_build_info\{version="0\.1\.0"\} 1$/m);
    assert.match(text, /route="\/api\/agents\/:did",method="GET",status="200"/);
    assert.match(text, /route="\(unmatched\)",method="GET",status="404"/);
    assert.doesNotMatch(text, /did:web|12345/, 'labels carry route templates, never DIDs or raw paths');
    assert.equal(sample(text, 'registry_database_errors_total'), 0);
  });

  test('one log line per request: method, route, URL, status, code, duration, request id, caller DID', async () => {
    registry.lines.length = 0;
    await registry.app.inject({
      method: 'GET',
      url: '/api/reviews/my?limit=5',
      headers: { ...bearer(caller.token), 'x-request-id': 'log-line-1' },
    });
    await registry.app.inject({
      method: 'GET',
      url: '/api/tasks/nope',
      headers: { 'x-request-id': 'log-line-2' },
    });
    await registry.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'log-line-3' } });
    const byId = (id: string) => registry.lines.filter((line) => line.reqId === id);
    const [ok] = byId('log-line-1');
    assert.equal(byId('log-line-1').length, 1);
    assert.deepEqual(
      { ...ok, time: 0, pid: 0, hostname: '', durationMs: 0 },
      {
        level: 30,
        time: 0,
        pid: 0,
        hostname: '',
        reqId: 'log-line-1',
        method: 'GET',
        route: '/api/reviews/my',
        url: '/api/reviews/my?limit=5',
        status: 200,
        did: caller.did,
        durationMs: 0,
        msg: 'GET /api/reviews/my?limit=5 200',
      },
    );
    assert.equal(typeof ok?.durationMs, 'number');
    const [refused] = byId('log-line-2');
    assert.equal(byId('log-line-2').length, 1);
    assert.equal(refused?.status, 401);
    assert.equal(refused?.code, 'TOKEN_MISSING');
    assert.equal(byId('log-line-3').length, 0, 'health probes stay out of the log');
  });
});

describe('database metrics', () => {
  test('database errors are counted; PostgreSQL pool gauges', async () => {
    const registry = await startRegistry();
    try {
      const text = (await registry.app.inject({ url: '/metrics' })).body;
      assert.equal(sample(text, 'registry_database_errors_total'), 0);
      if (testDatabase === 'postgres') {
        assert.equal(sample(text, 'registry_db_pool_max'), 10);
        assert.ok((sample(text, 'registry_db_pool_connections') ?? -1) >= 0);
        assert.equal(sample(text, 'registry_db_pool_waiting'), 0);
      }
      await registry.ctx.database.close();
      assert.equal((await registry.app.inject({ url: '/readyz' })).statusCode, 503);
      const after = (await registry.app.inject({ url: '/metrics' })).body;
      assert.equal(sample(after, 'registry_database_errors_total'), 1);
    } finally {
      await registry.close();
    }
  });
});

describe('operations endpoints', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ METRICS_TOKEN: 'scrape-secret-0123456789' });
  });
  after(() => registry.close());

  test('METRICS_TOKEN set: /metrics needs it as a bearer token', async () => {
    const anonymous = await registry.app.inject({ url: '/metrics' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json().code, 'INVALID_METRICS_TOKEN');
    const wrong = await registry.app.inject({ url: '/metrics', headers: bearer('scrape-secret-0123456780') });
    assert.equal(wrong.statusCode, 401);
    const right = await registry.app.inject({ url: '/metrics', headers: bearer('scrape-secret-0123456789') });
    assert.equal(right.statusCode, 200);
    assert.match(right.body, /http_requests_total/);
  });

  test('GET /version and /healthz say which build runs', async () => {
    const version = await registry.app.inject({ url: '/version' });
    assert.equal(version.statusCode, 200);
    const body = version.json();
    assert.equal(body.name, 'agent-registry');
    assert.equal(body.version, '0.1.0');
    assert.equal(body.node, process.version);
    assert.ok('commit' in body && 'built_at' in body);
    const health = (await registry.app.inject({ url: '/healthz' })).json();
    assert.equal(health.status, 'ok');
    assert.equal(health.version, '0.1.0');
  });

  test('Swagger UI at /docs shows the registry name and mark, not the framework logo', async () => {
    const page = await registry.app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>Agent Registry API<\/title>/);
    const initializer = await registry.app.inject({ url: '/docs/static/swagger-initializer.js' });
    const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(initializer.body);
    assert.ok(logo, 'the initializer replaces the logo');
    assert.match(Buffer.from(logo[1] ?? '', 'base64').toString('utf8'), /Agent Registry/);
  });
});

describe('errors that name the fix', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry();
  });
  after(() => registry.close());

  test('a secp256k1 public_key as ethers prints it (0x04..., 132 characters): drop the 0x', async () => {
    const agent = secp256k1Agent();
    const body = await registrationBody(agent, defaultProfile(), registry.clock.now());
    body.public_key = `0x${agent.publicKey}`;
    assert.equal(String(body.public_key).length, 132);
    const response = await registry.app.inject({
      method: 'POST',
      url: '/api/agents/register',
      payload: body,
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'INVALID_PUBLIC_KEY');
    assert.match(response.json().details, /drop the 0x prefix/);
  });

  test('a webhook_url on loopback names ALLOW_PRIVATE_NETWORKS', async () => {
    const agent = await register(registry);
    const response = await registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did, '/invocation'),
      headers: bearer(agent.token),
      payload: { enabled: true, delivery_mode: 'webhook', webhook_url: 'http://127.0.0.1:9/hook' },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'WEBHOOK_URL_FORBIDDEN');
    assert.match(response.json().details, / ALLOW_PRIVATE_NETWORKS=true/);
  });

  test('an unknown search parameter: 400 listing the accepted ones (q kept)', async () => {
    const response = await registry.app.inject({ url: '/api/agents/search?name=translator' });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'UNKNOWN_QUERY_PARAMETER');
    assert.match(
      response.json().details,
      /"name".*q, capability, tags, min_reputation, min_success_rate, active_within_days, available, domain, scope, limit, offset, cursor, sort, order/,
    );
    const ok = await registry.app.inject({ url: '/api/agents/search?q=translator&limit=1' });
    assert.equal(ok.statusCode, 200);
  });
});
