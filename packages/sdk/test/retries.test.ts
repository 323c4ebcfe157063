import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NetworkError, RegistryClient, RegistryError } from '../src/index.js';

interface Sent {
  method: string;
  url: string;
  idempotencyKey: string | null;
}

/** A fetch that answers from `script` in turn ('drop' throws as a lost connection) and records each request. */
function scripted(script: (Response | 'drop')[]): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fake: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    sent.push({
      method: init?.method ?? 'GET',
      url: String(input),
      idempotencyKey: headers.get('idempotency-key'),
    });
    const next = script.shift();
    if (next === undefined || next === 'drop')
      throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    return next;
  };
  return { fetch: fake, sent };
}

const ok = (body: unknown) => Response.json(body);
const refused = (status: number, retryAfter?: string) =>
  Response.json(
    { error: 'busy', details: 'try later', code: status === 429 ? 'RATE_LIMITED' : 'UNAVAILABLE' },
    { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } },
  );

function client(fetchImpl: typeof fetch, max = 2): RegistryClient {
  return new RegistryClient({
    registry: 'https://registry.example',
    token: 'header.eyJzdWIiOiJkaWQ6d2ViOnJlZ2lzdHJ5LmV4YW1wbGU6YWdlbnQ6MSJ9.sig',
    fetch: fetchImpl,
    retry: { max, baseDelayMs: 1 },
  });
}

describe('retries of idempotent requests', () => {
  test('a read is sent again after network errors and a 503, then answers', async () => {
    const { fetch, sent } = scripted(['drop', refused(503), ok({ status: 'ok', version: '1', commit: 'x' })]);
    const stats = await client(fetch).request<{ status: string }>('GET', '/healthz');
    assert.equal(stats.status, 'ok');
    assert.equal(sent.length, 3);
  });

  test('after max retries the last error is thrown', async () => {
    const { fetch, sent } = scripted(['drop', 'drop', 'drop', 'drop']);
    await assert.rejects(client(fetch).request('GET', '/healthz'), NetworkError);
    assert.equal(sent.length, 3);
  });

  test('a 429 with a short Retry-After is retried; a long one is the caller’s to wait', async () => {
    const short = scripted([refused(429, '0'), ok({})]);
    await client(short.fetch).request('GET', '/api/stats');
    assert.equal(short.sent.length, 2);
    const long = scripted([refused(429, '3600'), ok({})]);
    await assert.rejects(client(long.fetch).request('GET', '/api/stats'), (error: unknown) => {
      assert.ok(error instanceof RegistryError);
      assert.equal(error.retryAfterSeconds, 3600);
      return true;
    });
    assert.equal(long.sent.length, 1);
  });

  test('a POST without an idempotency key is never sent twice; other errors are not retried', async () => {
    const post = scripted(['drop', ok({})]);
    await assert.rejects(
      client(post.fetch).request('POST', '/api/reviews', { body: {}, auth: true }),
      NetworkError,
    );
    assert.equal(post.sent.length, 1);
    const notFound = scripted([refused(404), ok({})]);
    await assert.rejects(client(notFound.fetch).request('GET', '/api/agents/x'), RegistryError);
    assert.equal(notFound.sent.length, 1);
  });

  test('an invocation gets an idempotency key of its own and keeps it across retries', async () => {
    const answer = { task_id: 't', status: 'completed', output: { text: 'hi' } };
    const { fetch, sent } = scripted(['drop', ok(answer)]);
    const output = await client(fetch).invoke('did:web:registry.example:agent:2', 'echo', {});
    assert.deepEqual(output, { text: 'hi' });
    assert.equal(sent.length, 2);
    assert.match(sent[0]?.idempotencyKey ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(sent[1]?.idempotencyKey, sent[0]?.idempotencyKey);
    const given = scripted([ok(answer)]);
    await client(given.fetch).invoke(
      'did:web:registry.example:agent:2',
      'echo',
      {},
      { idempotencyKey: 'mine' },
    );
    assert.equal(given.sent[0]?.idempotencyKey, 'mine');
  });

  test('{ max: 0 } turns retries off', async () => {
    const { fetch, sent } = scripted(['drop', ok({})]);
    await assert.rejects(client(fetch, 0).request('GET', '/healthz'), NetworkError);
    assert.equal(sent.length, 1);
  });
});
