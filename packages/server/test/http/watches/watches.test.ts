import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { agentPath, bearer, testDatabase } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';
import { putRemoteEntry } from '../../../src/modules/federation/remote-entries-store.js';
import { json, startHook, type HookServer, type Received } from '../../support/webhook-hook.js';
import { mirroredEntry } from '../../support/remote-entries.js';
import { enableQueue } from '../../support/registry-setup.js';

interface CreatedWatch {
  id: string;
  secret: string;
  target: string;
  url: string;
  events: string[];
}

/** Standard Webhooks verification written from the spec, independent of the registry's signer. */
function verifiedBody(secret: string, request: Received, nowSeconds: number): Record<string, unknown> {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  assert.ok(Math.abs(Number(timestamp) - nowSeconds) <= 300, 'timestamp within five minutes');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = crypto
    .createHmac('sha256', key)
    .update(`${id}.${timestamp}.${request.raw}`)
    .digest('base64');
  const signatures = String(request.headers['webhook-signature'])
    .split(' ')
    .map((part) => part.split(',') as [string, string]);
  assert.ok(
    signatures.some(([version, signature]) => version === 'v1' && signature === expected),
    `a v1 signature over id.timestamp.body: ${String(request.headers['webhook-signature'])}`,
  );
  return JSON.parse(request.raw) as Record<string, unknown>;
}

const LIMITS = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WATCH_MAX_PER_AGENT: '3',
  WATCH_MAX_PER_TARGET: '4',
  WATCH_RATE_LIMIT: '6',
  WATCH_RETRY_BASE_MS: '1000',
};

describe(`watches (${testDatabase})`, () => {
  let registry: TestRegistry;
  let hook: HookServer;
  let answer = 200;
  before(async () => {
    registry = await startRegistry(LIMITS, { manualWatches: true });
    hook = await startHook((_, res) => json(res, answer, {}));
  });
  after(async () => {
    await hook.close();
    await registry.close();
  });

  const watch = (caller: Registered | undefined, payload: unknown) =>
    registry.app.inject({
      method: 'POST',
      url: '/api/watches',
      headers: caller === undefined ? {} : bearer(caller.token),
      payload: payload as Record<string, unknown>,
    });
  const updateProfile = (agent: Registered, description: string) =>
    registry.app.inject({
      method: 'PUT',
      url: agentPath(agent.did),
      headers: bearer(agent.token),
      payload: { description },
    });
  const nowSeconds = () => Math.floor(registry.clock.now() / 1000);

  test('a watcher receives agent.updated and agent.deactivated, signed with its secret, once each', async () => {
    const watcher = await register(registry);
    const target = await register(registry);
    const created = await watch(watcher, {
      target: target.did,
      url: hook.url('/updates'),
      events: ['agent.updated', 'agent.deactivated'],
    });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json<CreatedWatch>();
    assert.match(body.id, /^wat_/);
    assert.match(body.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(body.events, ['agent.updated', 'agent.deactivated']);

    const updated = await updateProfile(target, 'Now with watches');
    assert.equal(updated.statusCode, 200, updated.body);
    const seen = hook.received.length;
    await registry.ctx.watchJobs.runOnce();
    const deliveries = hook.received.slice(seen);
    assert.equal(deliveries.length, 1);
    const delivery = deliveries[0]!;
    assert.equal(delivery.url, '/updates');
    const message = verifiedBody(body.secret, delivery, nowSeconds());
    assert.equal(message.type, 'agent.updated');
    assert.equal(typeof message.timestamp, 'string');
    const data = message.data as Record<string, unknown>;
    assert.equal(data.watch_id, body.id);
    assert.equal(data.target, target.did);
    assert.equal(data.change, 'update');
    // A tampered body fails the same check.
    assert.throws(() => verifiedBody(body.secret, { ...delivery, raw: `${delivery.raw} ` }, nowSeconds()));

    // Nothing new: another round sends nothing again.
    await registry.ctx.watchJobs.runOnce();
    assert.equal(hook.received.length, seen + 1);

    const deactivated = await registry.app.inject({
      method: 'DELETE',
      url: agentPath(target.did),
      headers: bearer(target.token),
    });
    assert.equal(deactivated.statusCode, 200, deactivated.body);
    await registry.ctx.watchJobs.runOnce();
    assert.equal(hook.received.length, seen + 2);
    const last = verifiedBody(body.secret, hook.received[seen + 1]!, nowSeconds());
    assert.equal(last.type, 'agent.deactivated');
  });

  test('entry.tools_changed and entry.status_changed, published for a remote entry, reach its watcher', async () => {
    const watcher = await register(registry);
    const entry = mirroredEntry('did:web:peer.example:agents:kite', {
      name: 'Kite',
      description: 'A mirrored agent',
      capability: 'search',
      tag: 'web',
    });
    await putRemoteEntry(registry.ctx.database.db, entry, registry.clock.now());
    const wrong = await watch(watcher, {
      target: entry.id,
      url: hook.url('/entry'),
      events: ['agent.updated'],
    });
    assert.equal(wrong.statusCode, 400, wrong.body);
    assert.equal(wrong.json<{ code: string }>().code, 'INVALID_WATCH_EVENTS');
    const created = await watch(watcher, {
      target: entry.id,
      url: hook.url('/entry'),
      events: ['entry.tools_changed', 'entry.status_changed'],
    });
    assert.equal(created.statusCode, 201, created.body);
    const { secret } = created.json<CreatedWatch>();

    const seen = hook.received.length;
    const now = registry.clock.now();
    assert.equal(
      await registry.ctx.watches.publish({
        type: 'entry.tools_changed',
        target: entry.id,
        time: now,
        data: { tools_digest: `sha256:${'a'.repeat(64)}`, previous_tools_digest: null, tools_count: 3 },
      }),
      1,
    );
    await registry.ctx.watches.publish({
      type: 'entry.status_changed',
      target: entry.id,
      time: now,
      data: { status: 'unreachable', previous_status: 'answers' },
    });
    await registry.ctx.watchJobs.runOnce();
    const messages = hook.received.slice(seen).map((request) => verifiedBody(secret, request, nowSeconds()));
    assert.deepEqual(messages.map((message) => message.type).sort(), [
      'entry.status_changed',
      'entry.tools_changed',
    ]);
    const tools = messages.find((message) => message.type === 'entry.tools_changed')!;
    assert.deepEqual(tools.data, {
      watch_id: created.json<CreatedWatch>().id,
      target: entry.id,
      tools_digest: `sha256:${'a'.repeat(64)}`,
      previous_tools_digest: null,
      tools_count: 3,
    });
  });

  test('a failed delivery is retried with the same message id; a deleted watch gets no more', async () => {
    const watcher = await register(registry);
    const target = await register(registry);
    const created = (
      await watch(watcher, { target: target.did, url: hook.url('/retry'), events: ['agent.updated'] })
    ).json<CreatedWatch>();
    answer = 500;
    try {
      await updateProfile(target, 'first');
      const seen = hook.received.length;
      await registry.ctx.watchJobs.runOnce();
      assert.equal(hook.received.length, seen + 1);
      const firstId = hook.received[seen]!.headers['webhook-id'];
      // Not due yet: nothing is sent until the backoff has passed.
      await registry.ctx.watchJobs.runOnce();
      assert.equal(hook.received.length, seen + 1);
      answer = 200;
      registry.clock.advance(2_000);
      await registry.ctx.watchJobs.runOnce();
      assert.equal(hook.received.length, seen + 2);
      assert.equal(hook.received[seen + 1]!.headers['webhook-id'], firstId);
      verifiedBody(created.secret, hook.received[seen + 1]!, nowSeconds());
    } finally {
      answer = 200;
    }

    // A change queued, then the watch deleted before it is sent: nothing goes out, now or later.
    await updateProfile(target, 'second');
    const listed = await registry.app.inject({
      method: 'GET',
      url: '/api/watches',
      headers: bearer(watcher.token),
    });
    assert.deepEqual(
      listed.json<{ watches: { id: string }[] }>().watches.map((item) => item.id),
      [created.id],
    );
    const stranger = await register(registry);
    const notYours = await registry.app.inject({
      method: 'DELETE',
      url: `/api/watches/${created.id}`,
      headers: bearer(stranger.token),
    });
    assert.equal(notYours.statusCode, 404, notYours.body);
    const removed = await registry.app.inject({
      method: 'DELETE',
      url: `/api/watches/${created.id}`,
      headers: bearer(watcher.token),
    });
    assert.equal(removed.statusCode, 204, removed.body);
    const seen = hook.received.length;
    await registry.ctx.watchJobs.runOnce();
    await updateProfile(target, 'third');
    await registry.ctx.watchJobs.runOnce();
    assert.equal(hook.received.length, seen);
    const again = await registry.app.inject({
      method: 'DELETE',
      url: `/api/watches/${created.id}`,
      headers: bearer(watcher.token),
    });
    assert.equal(again.statusCode, 404);
    assert.equal(again.json<{ code: string }>().code, 'WATCH_NOT_FOUND');
  });

  test('agent.availability_changed: announced once when a watched agent comes online', async () => {
    const watcher = await register(registry);
    const target = await register(registry);
    await enableQueue(registry, target);
    const created = await watch(watcher, {
      target: target.did,
      url: hook.url('/presence'),
      events: ['agent.availability_changed'],
    });
    assert.equal(created.statusCode, 201, created.body);
    const { secret } = created.json<CreatedWatch>();
    const seen = hook.received.length;
    await registry.ctx.watchJobs.runOnce();
    assert.equal(hook.received.length, seen, 'no event for the status the watch started at');
    await registry.ctx.availability.seen(target.did);
    await registry.ctx.watchJobs.runOnce();
    await registry.ctx.watchJobs.runOnce();
    assert.equal(hook.received.length, seen + 1);
    const message = verifiedBody(secret, hook.received[seen]!, nowSeconds());
    assert.equal(message.type, 'agent.availability_changed');
    assert.equal((message.data as { status: string }).status, 'online');
  });

  test('bad input is answered with a clear 4xx', async () => {
    const watcher = await register(registry);
    const target = await register(registry);
    const cases: [unknown, number, string][] = [
      [{ target: target.did, url: 'ftp://example.com/x', events: ['agent.updated'] }, 400, 'INVALID_URL'],
      [{ target: target.did, url: 'not a url', events: ['agent.updated'] }, 400, 'INVALID_URL'],
      [{ target: target.did, url: hook.url(), events: [] }, 400, 'VALIDATION_FAILED'],
      [{ target: target.did, url: hook.url(), events: ['agent.exploded'] }, 400, 'VALIDATION_FAILED'],
      [{ target: target.did, url: hook.url(), events: ['entry.tools_changed'] }, 400, 'INVALID_WATCH_EVENTS'],
      [
        { target: target.did, url: `${hook.url()}?${'x'.repeat(3000)}`, events: ['agent.updated'] },
        400,
        'VALIDATION_FAILED',
      ],
      [
        {
          target: `did:web:localhost%3A8080:agent:${'0'.repeat(32)}`,
          url: hook.url(),
          events: ['agent.updated'],
        },
        404,
        'WATCH_TARGET_NOT_FOUND',
      ],
      [
        { target: 'peer:nowhere#x', url: hook.url(), events: ['entry.tools_changed'] },
        404,
        'WATCH_TARGET_NOT_FOUND',
      ],
    ];
    for (const [payload, status, code] of cases) {
      const response = await watch(watcher, payload);
      assert.equal(response.statusCode, status, `${JSON.stringify(payload).slice(0, 120)}: ${response.body}`);
      const error = response.json<{ code: string; details?: string }>();
      assert.equal(error.code, code, response.body);
    }
    const anonymous = await watch(undefined, {
      target: target.did,
      url: hook.url(),
      events: ['agent.updated'],
    });
    assert.equal(anonymous.statusCode, 401);
    const badCursor = await registry.app.inject({
      method: 'GET',
      url: '/api/watches?cursor=nonsense',
      headers: bearer(watcher.token),
    });
    assert.equal(badCursor.statusCode, 400);
    assert.equal(badCursor.json<{ code: string }>().code, 'INVALID_CURSOR');
  });

  test('watches are bounded per agent, per target and by creation rate; the list is cursor-paged', async () => {
    const watcher = await register(registry);
    const target = await register(registry);
    const make = (who: Registered, on: string) =>
      watch(who, { target: on, url: hook.url(), events: ['agent.updated'] });
    for (let i = 0; i < 3; i += 1) assert.equal((await make(watcher, target.did)).statusCode, 201);
    const fourth = await make(watcher, target.did);
    assert.equal(fourth.statusCode, 409, fourth.body);
    assert.equal(fourth.json<{ code: string }>().code, 'WATCH_LIMIT_REACHED');

    const page1 = await registry.app.inject({
      method: 'GET',
      url: '/api/watches?limit=2',
      headers: bearer(watcher.token),
    });
    const first = page1.json<{ watches: { id: string }[]; next_cursor: string | null }>();
    assert.equal(first.watches.length, 2);
    assert.ok(first.next_cursor !== null);
    const page2 = await registry.app.inject({
      method: 'GET',
      url: `/api/watches?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`,
      headers: bearer(watcher.token),
    });
    const second = page2.json<{ watches: { id: string }[]; next_cursor: string | null }>();
    assert.equal(second.watches.length, 1);
    assert.equal(second.next_cursor, null);

    // The target already has 3; one more from another agent reaches its bound of 4.
    const other = await register(registry);
    assert.equal((await make(other, target.did)).statusCode, 201);
    const overTarget = await make(other, target.did);
    assert.equal(overTarget.statusCode, 409, overTarget.body);
    assert.match(overTarget.json<{ details: string }>().details, /most watches one target/);

    // Deleting does not refill the creation rate: 3 created, delete and create until the window is spent.
    const ids = [...first.watches, ...second.watches].map((item) => item.id);
    const elsewhere = await register(registry);
    let created = 3;
    for (const id of ids) {
      await registry.app.inject({
        method: 'DELETE',
        url: `/api/watches/${id}`,
        headers: bearer(watcher.token),
      });
      const response = await make(watcher, elsewhere.did);
      if (created < 6) assert.equal(response.statusCode, 201, response.body);
      created += 1;
    }
    const ids2 = (
      await registry.app.inject({ method: 'GET', url: '/api/watches', headers: bearer(watcher.token) })
    ).json<{ watches: { id: string }[] }>().watches;
    await registry.app.inject({
      method: 'DELETE',
      url: `/api/watches/${ids2[0]!.id}`,
      headers: bearer(watcher.token),
    });
    const limited = await make(watcher, elsewhere.did);
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json<{ code: string }>().code, 'WATCH_RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
  });
});

test(`a registry that may not call private networks refuses a loopback watch url (${testDatabase})`, async () => {
  const registry = await startRegistry({}, { manualWatches: true });
  try {
    const watcher = await register(registry);
    const target = await register(registry);
    for (const url of ['http://127.0.0.1:9/hook', 'https://127.0.0.1:9/hook', 'https://169.254.169.254/']) {
      const response = await registry.app.inject({
        method: 'POST',
        url: '/api/watches',
        headers: bearer(watcher.token),
        payload: { target: target.did, url, events: ['agent.updated'] },
      });
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      assert.equal(response.json<{ code: string }>().code, 'INVALID_URL');
    }
  } finally {
    await registry.close();
  }
});
