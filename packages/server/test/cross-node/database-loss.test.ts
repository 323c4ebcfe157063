import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import {
  agentPath,
  bearer,
  defaultProfile,
  ed25519Agent,
  eventually,
  registrationBody,
  testDatabase,
  privateClusterUnavailable,
  startPrivateCluster,
  startRegistryProcess,
  type PrivateCluster,
  type RegistryProcess,
} from '@agent-registry/testkit';
import { register, startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/**
 * Losing PostgreSQL under write load must never kill the registry. Requests that
 * used a lost connection answer 503 DATABASE_UNAVAILABLE with Retry-After, every acknowledged write
 * is kept, and the node recovers by itself (pool, LISTEN connection, /readyz).
 */

interface Answer {
  status: number;
  code?: string;
  retryAfter: string | null;
}

/** Registrations and reviews from `workers` concurrent loops until stopped; records every answer. */
class WriteLoad {
  readonly registered: string[] = [];
  readonly reviewed: string[] = [];
  readonly failures: Answer[] = [];
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly post: (
      url: string,
      body: unknown,
      token?: string,
    ) => Promise<Answer & { json: unknown }>,
    private readonly reviewTarget: string,
  ) {}

  start(workers: number): void {
    this.loops = Array.from({ length: workers }, () => this.loop());
  }

  get acknowledged(): number {
    return this.registered.length + this.reviewed.length;
  }

  async until(writes: number): Promise<void> {
    await eventually(() => this.acknowledged >= writes, `${writes} acknowledged writes`, 120_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const agent = ed25519Agent();
      const body = await registrationBody(agent, defaultProfile(), Date.now());
      const registration = await this.post('/api/agents/register', body);
      if (registration.status !== 201) {
        this.failures.push(registration);
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const { did, token } = registration.json as { did: string; token: string };
      this.registered.push(did);
      const review = await this.post(
        '/api/reviews',
        { target_did: this.reviewTarget, rating: 7.5, comment: 'under load' },
        token,
      );
      if (review.status === 201) this.reviewed.push((review.json as { review_id: string }).review_id);
      else this.failures.push(review);
    }
  }
}

function assertOnlyUnavailable(failures: Answer[]): void {
  for (const failure of failures) {
    assert.equal(failure.status, 503, JSON.stringify(failure));
    assert.equal(failure.code, 'DATABASE_UNAVAILABLE', JSON.stringify(failure));
    assert.ok(failure.retryAfter !== null && Number(failure.retryAfter) >= 1, JSON.stringify(failure));
  }
}

async function waitForReady(url: string): Promise<void> {
  // Bounded by the test runner's timeout; the node must get there by itself.
  for (;;) {
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const httpPost =
  (base: string) =>
  async (url: string, body: unknown, token?: string): Promise<Answer & { json: unknown }> => {
    const response = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? bearer(token) : {}) },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { code?: string };
    return {
      status: response.status,
      code: json.code,
      retryAfter: response.headers.get('retry-after'),
      json,
    };
  };

/** Each scenario waits for the node to recover by itself; a node that never does fails here, not at CI's limit. */
const SCENARIO_TIMEOUT = { timeout: 5 * 60_000 };

const skipPrivate =
  testDatabase !== 'postgres'
    ? 'PostgreSQL-only: runs in the PostgreSQL pass (TEST_DATABASE=postgres)'
    : privateClusterUnavailable();

describe('PostgreSQL restarts under write load (private cluster)', { skip: skipPrivate }, () => {
  let cluster: PrivateCluster;
  let registry: RegistryProcess;

  before(async () => {
    cluster = await startPrivateCluster();
    await cluster.query('CREATE DATABASE registry');
    registry = await startRegistryProcess({
      DATABASE_URL: cluster.url('registry'),
      PUBLIC_URL: 'http://localhost:8080',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      REVIEW_RATE_LIMIT: '100000',
    });
  });

  after(async () => {
    await registry?.stop();
    cluster?.destroy();
  });

  test(
    'fast and immediate restarts and an outage: the process survives, acknowledged writes are kept, /readyz recovers',
    SCENARIO_TIMEOUT,
    async () => {
      const post = httpPost(registry.url);
      const target = await post(
        '/api/agents/register',
        await registrationBody(ed25519Agent(), defaultProfile(), Date.now()),
      );
      assert.equal(target.status, 201);
      const load = new WriteLoad(post, (target.json as { did: string }).did);
      load.start(8);
      try {
        for (const mode of ['fast', 'immediate', 'down for a while'] as const) {
          await load.until(load.acknowledged + 40);
          if (mode === 'down for a while') {
            // Requests meanwhile fail fast with 503 (connect timeout); none hangs or crashes the node.
            cluster.stop('immediate');
            const failuresBefore = load.failures.length;
            await eventually(() => load.failures.length >= failuresBefore + 10, 'ten more failed writes');
            cluster.start();
          } else {
            cluster.restart(mode);
          }
          assert.equal(registry.child.exitCode, null, `registry died (${mode}):\n${registry.output()}`);
          // Writes succeed again after the restart, without any help.
          await load.until(load.acknowledged + 40);
        }
      } finally {
        await load.stop();
      }
      assert.equal(registry.child.exitCode, null, `registry died:\n${registry.output()}`);
      await waitForReady(registry.url);
      assertOnlyUnavailable(load.failures);

      const registered = await cluster.query(
        'SELECT count(*)::int AS n FROM agents WHERE did = ANY($1)',
        [load.registered],
        'registry',
      );
      assert.equal(registered.rows[0].n, load.registered.length, 'every 201 registration is stored');
      const reviewed = await cluster.query(
        'SELECT count(*)::int AS n FROM reviews WHERE id = ANY($1)',
        [load.reviewed],
        'registry',
      );
      assert.equal(reviewed.rows[0].n, load.reviewed.length, 'every 201 review is stored');

      const later = await post(
        '/api/agents/register',
        await registrationBody(ed25519Agent(), defaultProfile(), Date.now()),
      );
      assert.equal(later.status, 201);
    },
  );

  test(
    'a result reported while a node’s LISTEN connection is down still wakes its blocked invocation',
    SCENARIO_TIMEOUT,
    async () => {
      // Node A connects as its own role, so its connections can be cut and kept out while node B
      // (the superuser) completes the task: the NOTIFY is lost for A, which must re-check on reconnect.
      await cluster.query('CREATE ROLE node_a SUPERUSER LOGIN');
      const nodeA = await startRegistryProcess({
        DATABASE_URL: cluster.url('registry', 'node_a'),
        PUBLIC_URL: 'http://localhost:8080',
        DATABASE_CONNECT_TIMEOUT_MS: '1000',
      });
      try {
        const postA = httpPost(nodeA.url);
        const postB = httpPost(registry.url);
        const worker = await postB(
          '/api/agents/register',
          await registrationBody(ed25519Agent(), defaultProfile(), Date.now()),
        );
        const { did: workerDid, token: workerToken } = worker.json as { did: string; token: string };
        const enabled = await fetch(`${registry.url}${agentPath(workerDid, '/invocation')}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...bearer(workerToken) },
          body: JSON.stringify({ enabled: true, delivery_mode: 'queue' }),
        });
        assert.equal(enabled.status, 200, await enabled.text());
        const caller = await postA(
          '/api/agents/register',
          await registrationBody(ed25519Agent(), defaultProfile(), Date.now()),
        );
        const callerToken = (caller.json as { token: string }).token;

        const invocation = postA(
          '/api/invoke',
          { target_did: workerDid, capability: 'translation', input: { text: 'hi' }, timeout_ms: 300_000 },
          callerToken,
        );
        const pending = await waitForPendingTask(registry.url, workerToken);

        await cluster.query('ALTER ROLE node_a NOLOGIN');
        await cluster.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'node_a'",
        );
        const accepted = await postB(`/api/agent/tasks/${pending}/accept`, {}, workerToken);
        assert.equal(accepted.status, 200);
        const done = await postB(
          `/api/agent/tasks/${pending}/result`,
          { output: { text: 'salut' } },
          workerToken,
        );
        assert.equal(done.status, 200);
        await cluster.query('ALTER ROLE node_a LOGIN');

        // A waiter that missed the NOTIFY would sleep until its deadline (5 minutes) and only then
        // read the completed task; re-checking on reconnect answers within seconds. The bound is a
        // liveness bound far from both, not a speed measurement.
        const missed = new Promise<'missed'>((resolve) =>
          setTimeout(() => resolve('missed'), 90_000).unref(),
        );
        const answer = await Promise.race([invocation, missed]);
        assert.notEqual(answer, 'missed', 'the blocked invocation was not woken after LISTEN reconnected');
        if (answer === 'missed') return;
        assert.equal(answer.status, 200, JSON.stringify(answer.json));
        assert.deepEqual((answer.json as { output: unknown }).output, { text: 'salut' });
        assert.equal(nodeA.child.exitCode, null, nodeA.output());
        await waitForReady(nodeA.url);
      } finally {
        await nodeA.stop();
      }
    },
  );
});

async function waitForPendingTask(url: string, token: string): Promise<string> {
  for (;;) {
    const response = await fetch(`${url}/api/agent/tasks?wait=5`, { headers: bearer(token) });
    const { tasks } = (await response.json()) as { tasks: { task_id: string }[] };
    if (tasks[0] !== undefined) return tasks[0].task_id;
  }
}

describe(
  'pg_terminate_backend of every connection during writes (shared server, own database)',
  {
    skip: testDatabase !== 'postgres' ? 'PostgreSQL-only: runs in the PostgreSQL pass' : undefined,
  },
  () => {
    let registry: TestRegistry;
    let base: string;

    before(async () => {
      registry = await startRegistry({ REVIEW_RATE_LIMIT: '100000', DATABASE_CONNECT_TIMEOUT_MS: '1000' });
      base = await registry.app.listen({ port: 0, host: '127.0.0.1' });
    });

    after(() => registry?.close());

    test(
      'the app survives, answers 503 DATABASE_UNAVAILABLE meanwhile, keeps every acknowledged write',
      SCENARIO_TIMEOUT,
      async () => {
        const database = new URL(registry.database.url).pathname.slice(1);
        const terminate = async () => {
          const admin = new pg.Client({ connectionString: registry.database.url });
          await admin.connect();
          try {
            const result = await admin.query(
              'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
              [database],
            );
            return result.rows[0].n as number;
          } finally {
            await admin.end();
          }
        };
        const target = await register(registry);
        const load = new WriteLoad(httpPost(base), target.did);
        load.start(8);
        try {
          for (let round = 0; round < 3; round += 1) {
            await load.until(load.acknowledged + 30);
            assert.ok((await terminate()) > 0, 'the registry had connections to terminate');
            await load.until(load.acknowledged + 30);
          }
        } finally {
          await load.stop();
        }
        await waitForReady(base);
        assertOnlyUnavailable(load.failures);
        const check = new pg.Client({ connectionString: registry.database.url });
        await check.connect();
        try {
          const agents = await check.query('SELECT count(*)::int AS n FROM agents WHERE did = ANY($1)', [
            load.registered,
          ]);
          assert.equal(agents.rows[0].n, load.registered.length);
          const reviews = await check.query('SELECT count(*)::int AS n FROM reviews WHERE id = ANY($1)', [
            load.reviewed,
          ]);
          assert.equal(reviews.rows[0].n, load.reviewed.length);
        } finally {
          await check.end();
        }
      },
    );
  },
);

describe(
  'SQLite busy beyond busy_timeout',
  {
    skip: testDatabase !== 'sqlite' ? 'SQLite-only: runs in the SQLite pass' : undefined,
  },
  () => {
    let registry: TestRegistry;

    before(async () => {
      registry = await startRegistry({ SQLITE_BUSY_TIMEOUT_MS: '50' });
    });

    after(() => registry?.close());

    test(
      'a write blocked by another process’s lock answers 503 DATABASE_UNAVAILABLE with Retry-After, then succeeds',
      SCENARIO_TIMEOUT,
      async () => {
        const other = new SqliteDatabase(registry.database.file as string);
        const registerOnce = async () =>
          registry.app.inject({
            method: 'POST',
            url: '/api/agents/register',
            payload: await registrationBody(ed25519Agent(), defaultProfile(), registry.clock.now()),
          });
        try {
          other.exec('BEGIN EXCLUSIVE');
          const blocked = await registerOnce();
          assert.equal(blocked.statusCode, 503, blocked.body);
          assert.equal(blocked.json().code, 'DATABASE_UNAVAILABLE');
          assert.equal(blocked.headers['retry-after'], '1');
          other.exec('ROLLBACK');
        } finally {
          other.close();
        }
        const after = await registerOnce();
        assert.equal(after.statusCode, 201, after.body);
      },
    );
  },
);
