import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  agentPath,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  type Profile,
} from '@agent-registry/testkit';
import { register, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { bearerInject, startWithAgent } from '../../../support/registry-setup.js';
import { assertError, schemaWorkers } from '../../../support/schema-worker.js';

/** Poison input: every one is a 4xx with {error, details, code}, on both dialects. */
describe('poison input is refused, cheaply and with the right 4xx', () => {
  let registry: TestRegistry;
  let caller: Registered;
  before(async () => {
    ({ registry, agent: caller } = await startWithAgent());
  });
  after(() => registry.close());

  const inject = bearerInject(() => registry);
  const { workerWith, invoke } = schemaWorkers(
    () => registry,
    () => caller,
  );

  describe('item 7: U+0000 in stored text is a 400 naming the field', () => {
    const signedRegistration = async (profile: Profile, extra: Record<string, unknown> = {}) =>
      inject(
        'POST',
        '/api/agents/register',
        undefined,
        await registrationBody(ed25519Agent(), profile, registry.clock.now(), extra),
      );

    test('registration: name, tag, capability type, referrer', async () => {
      const base = defaultProfile();
      assertError(
        await signedRegistration({ ...base, name: 'a\u0000b' }),
        400,
        'INVALID_TEXT',
        /profile\.name contains U\+0000/,
      );
      assertError(
        await signedRegistration({ ...base, tags: ['ok', 'a\u0000'] }),
        400,
        'INVALID_TEXT',
        /profile\.tags\[1\]/,
      );
      assertError(
        await signedRegistration({ ...base, capabilities: [{ type: 'x\u0000' }] }),
        400,
        'INVALID_TEXT',
        /profile\.capabilities\[0\]\.type/,
      );
      assertError(await signedRegistration(base, { referrer: '\u0000' }), 400, 'INVALID_TEXT', /referrer/);
    });

    test('profile update, review comment, worker fail error', async () => {
      const target = await register(registry);
      assertError(
        await inject('PUT', agentPath(target.did), target.token, { description: 'd\u0000' }),
        400,
        'INVALID_TEXT',
        /description/,
      );
      assertError(
        await inject('POST', '/api/reviews', caller.token, {
          target_did: target.did,
          rating: 8,
          comment: 'good\u0000',
        }),
        400,
        'INVALID_TEXT',
        /comment/,
      );
      assertError(
        await inject('POST', '/api/agent/tasks/some-task/fail', target.token, { error: 'e\u0000' }),
        400,
        'INVALID_TEXT',
        /error contains U\+0000/,
      );
      // Nothing half-written: the profile and reviews are as they were.
      const profile = (await inject('GET', agentPath(target.did))).json();
      assert.equal(profile.description, defaultProfile().description);
      assert.equal(profile.total_reviews, 0);
    });

    test('search parameters: capability=%00, tags=a%00, q=%00', async () => {
      assertError(
        await inject('GET', '/api/agents/search?capability=%00'),
        400,
        'INVALID_TEXT',
        /query capability/,
      );
      assertError(await inject('GET', '/api/agents/search?tags=a%00'), 400, 'INVALID_TEXT', /query tags/);
      assertError(await inject('GET', '/api/agents/search?q=a%00b'), 400, 'INVALID_TEXT', /query q/);
      assertError(
        await inject('GET', `/api/agents/${encodeURIComponent('did:web:x\u0000')}`),
        400,
        'INVALID_TEXT',
        /path did/,
      );
    });

    test('an invocation payload may carry U+0000: it travels as JSON and comes back intact', async () => {
      const worker = await workerWith({ type: 'object' });
      const pending = invoke(worker.did, { text: 'a\u0000b' }, 10_000);
      let tasks: { task_id: string; input: { text: string } }[] = [];
      while (tasks.length === 0)
        tasks = (await inject('GET', '/api/agent/tasks?wait=2', worker.token)).json().tasks;
      assert.equal(tasks[0]!.input.text, 'a\u0000b');
      const done = await inject('POST', `/api/agent/tasks/${tasks[0]!.task_id}/result`, worker.token, {
        output: { text: 'c\u0000d' },
      });
      assert.equal(done.statusCode, 200, done.body);
      const result = await pending;
      assert.equal(result.statusCode, 200, result.body);
      assert.equal(result.json().output.text, 'c\u0000d');
    });
  });

  describe('item 8: integer query parameters are bounded', () => {
    const huge = ['1e20', '9223372036854775807', '1e308', '1e400', '-1', '1.5', 'x'];

    test('offsets and limits out of range are 400 naming the parameter and its range', async () => {
      const target = await register(registry);
      const worker = await workerWith({ type: 'object' });
      const cases: [string, string | undefined, RegExp][] = [
        [
          `${agentPath(target.did, '/reviews')}?offset=`,
          undefined,
          /offset must be an integer from 0 to 1000000/,
        ],
        [`${agentPath(target.did, '/reviews')}?limit=`, undefined, /limit must be an integer from 1 to 100/],
        ['/api/reviews/my?offset=', caller.token, /offset must be an integer from 0 to 1000000/],
        ['/api/agents/search?offset=', undefined, /offset must be an integer from 0 to 9999/],
        ['/api/agents/search?limit=', undefined, /limit must be an integer from 1 to 100/],
        ['/api/agents/search?min_reputation=', undefined, /min_reputation must be a number from 0 to 100/],
        ['/api/agent/tasks?limit=', worker.token, /limit must be an integer from 1 to 50/],
        ['/api/agent/tasks?wait=', worker.token, /wait must be a number from 0 to 60/],
      ];
      for (const [url, token, details] of cases) {
        for (const value of huge) {
          if (url.includes('min_reputation') || url.includes('wait')) {
            if (value === '1.5') continue; // a number, not necessarily an integer
          }
          assertError(await inject('GET', `${url}${value}`, token), 400, 'VALIDATION_FAILED', details);
        }
      }
    });

    test('the largest accepted values work on this database', async () => {
      const target = await register(registry);
      const reviews = await inject('GET', `${agentPath(target.did, '/reviews')}?offset=1000000&limit=100`);
      assert.equal(reviews.statusCode, 200, reviews.body);
      assert.equal(reviews.json().offset, 1_000_000);
      const mine = await inject('GET', '/api/reviews/my?offset=1000000', caller.token);
      assert.equal(mine.statusCode, 200, mine.body);
      assert.equal((await inject('GET', '/api/agents/search?offset=9999')).statusCode, 200);
    });
  });

  describe('item 9: search words that are only combining marks', () => {
    test('q of combining marks alone is 400; such words among others are dropped', async () => {
      await register(registry, undefined, { ...defaultProfile(), name: 'Combining mark finder' });
      assertError(await inject('GET', '/api/agents/search?q=%CC%81'), 400, 'INVALID_SEARCH_QUERY');
      assertError(await inject('GET', '/api/agents/search?q=%CC%81%20%CC%88'), 400, 'INVALID_SEARCH_QUERY');
      const mixed = await inject('GET', '/api/agents/search?q=a%20%CC%81%20b');
      assert.equal(mixed.statusCode, 200, mixed.body);
      const found = await inject('GET', '/api/agents/search?q=combining%20%CC%81%20finder');
      assert.equal(found.statusCode, 200, found.body);
      assert.equal(found.json().agents[0]?.name, 'Combining mark finder');
    });
  });

  describe('item 11: text must be valid Unicode; names must be visible and not reorder text', () => {
    test('a lone surrogate anywhere in a body is 400, before the signature is even checked', async () => {
      const agent = ed25519Agent();
      const body = await registrationBody(
        agent,
        { ...defaultProfile(), name: 'Lone \ud800' },
        registry.clock.now(),
      );
      assertError(
        await inject('POST', '/api/agents/register', undefined, body),
        400,
        'INVALID_TEXT',
        /profile\.name contains a lone/,
      );
      const worker = await workerWith({ type: 'object' });
      assertError(await invoke(worker.did, { text: '\udc00' }), 400, 'INVALID_TEXT', /input\.text/);
      assertError(
        await inject('GET', '/api/agents/search?q=%ED%A0%80'),
        400,
        'INVALID_URL_ENCODING',
        /query q/,
      );
    });

    test('blank, invisible and bidi-override names are refused at registration and update', async () => {
      const target = await register(registry);
      for (const name of [
        ' ',
        '   ',
        '\u200b',
        '\u200b\u200c\u2060',
        '\u0301',
        'Pay\u202Egnp.exe',
        '\u2066Bank',
        'a\nb',
      ]) {
        const registered = await inject(
          'POST',
          '/api/agents/register',
          undefined,
          await registrationBody(ed25519Agent(), { ...defaultProfile(), name }, registry.clock.now()),
        );
        assertError(registered, 400, 'INVALID_NAME', /profile\.name/);
        assertError(
          await inject('PUT', agentPath(target.did), target.token, { name }),
          400,
          'INVALID_NAME',
          /^name/,
        );
      }
      assertError(
        await inject('PUT', agentPath(target.did), target.token, { tags: ['ok', 'x\u202Ey'] }),
        400,
        'INVALID_TEXT',
        /tags\[1\].*U\+202E/,
      );
    });

    test('names in any script, with emoji and combining marks, are stored exactly as signed', async () => {
      for (const name of ['Łódź 🤖 agent', 'Crème\u0301 brûlée', 'محلل البيانات', '  spaced  ']) {
        const agent = ed25519Agent();
        const registered = await register(registry, agent, { ...defaultProfile(), name });
        const profile = (await inject('GET', agentPath(registered.did))).json();
        assert.equal(profile.name, name);
      }
    });
  });

  describe('framework and parser errors are {error, details, code}', () => {
    let port: number;
    before(async () => {
      await registry.app.listen({ port: 0, host: '127.0.0.1' });
      port = (registry.app.server.address() as net.AddressInfo).port;
    });

    /** Sends raw bytes and reads until the server closes: what inject cannot produce. */
    function rawRequest(text: string): Promise<{ status: number; body: Record<string, string> }> {
      return new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString('utf8')));
        socket.on('error', reject);
        socket.on('close', () => {
          const [head = '', ...rest] = data.split('\r\n\r\n');
          const status = Number(head.split(' ')[1]);
          try {
            resolve({ status, body: JSON.parse(rest.join('\r\n\r\n')) as Record<string, string> });
          } catch {
            reject(new Error(`not JSON: ${data}`));
          }
        });
      });
    }

    const request = (line: string, headers: string[] = [], body = '') =>
      rawRequest(
        `${line}\r\nHost: localhost\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`,
      );

    const cases: [string, () => Promise<{ status: number; body: Record<string, string> }>, number, string][] =
      [
        [
          'bad percent-encoding in the path',
          () => request('GET /api/agents/%E0%A4%A HTTP/1.1'),
          400,
          'INVALID_URL_ENCODING',
        ],
        [
          'bad percent-encoding in the query',
          () => request('GET /api/agents/search?q=%E0%A4%A HTTP/1.1'),
          400,
          'INVALID_URL_ENCODING',
        ],
        [
          'a DID path over the parameter limit',
          () => request(`GET /api/agents/did:web:x:${'a'.repeat(600)} HTTP/1.1`),
          414,
          'URI_TOO_LONG',
        ],
        [
          'a non-numeric Content-Length',
          () => request('POST /api/invoke HTTP/1.1', ['Content-Length: abc']),
          400,
          'INVALID_CONTENT_LENGTH',
        ],
        [
          'Content-Length with chunked encoding',
          () =>
            request(
              'POST /api/invoke HTTP/1.1',
              ['Content-Length: 2', 'Transfer-Encoding: chunked'],
              '0\r\n\r\n',
            ),
          400,
          'INVALID_TRANSFER_ENCODING',
        ],
        [
          'a malformed chunk size',
          () =>
            request(
              'POST /api/agents/register HTTP/1.1',
              ['Content-Type: application/json', 'Transfer-Encoding: chunked'],
              'zz\r\n{}\r\n0\r\n\r\n',
            ),
          400,
          'INVALID_TRANSFER_ENCODING',
        ],
        [
          'oversized headers',
          () => request('GET /healthz HTTP/1.1', [`X-Big: ${'a'.repeat(20_000)}`]),
          431,
          'HEADERS_TOO_LARGE',
        ],
        ['not HTTP at all', () => rawRequest('HELLO\r\n\r\n'), 400, 'MALFORMED_REQUEST'],
        [
          'invalid JSON',
          () =>
            request(
              'POST /api/agents/register HTTP/1.1',
              ['Content-Type: application/json', 'Content-Length: 3'],
              '{a}',
            ),
          400,
          'INVALID_JSON',
        ],
        [
          'a form-encoded body',
          () =>
            request(
              'POST /api/agents/register HTTP/1.1',
              ['Content-Type: application/x-www-form-urlencoded', 'Content-Length: 3'],
              'a=b',
            ),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ],
        [
          'a text/plain body',
          () =>
            request(
              'POST /api/agents/register HTTP/1.1',
              ['Content-Type: text/plain', 'Content-Length: 2'],
              '{}',
            ),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ],
        [
          'a body without Content-Type',
          () => request('POST /api/agents/register HTTP/1.1', ['Content-Length: 2'], '{}'),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        ],
      ];

    for (const [name, send, status, code] of cases) {
      test(name, async () => {
        const { status: answered, body } = await send();
        assert.equal(answered, status, JSON.stringify(body));
        assert.equal(body.code, code);
        assert.equal(typeof body.error, 'string');
        assert.equal(typeof body.details, 'string');
        assert.deepEqual(Object.keys(body).sort(), ['code', 'details', 'error']);
      });
    }

    test('a body that is not JSON gets 415 saying to send Content-Type: application/json', async () => {
      const { body } = await request(
        'POST /api/agents/register HTTP/1.1',
        ['Content-Type: application/x-www-form-urlencoded', 'Content-Length: 9'],
        'rating=10',
      );
      assert.match(body.details ?? '', /Content-Type: application\/json/);
      assert.match(body.details ?? '', /application\/x-www-form-urlencoded/);
    });

    test('the server still answers after all of that', async () => {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
    });
  });
});
