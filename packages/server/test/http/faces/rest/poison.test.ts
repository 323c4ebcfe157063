import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CompiledSchemas } from '../../../../src/modules/capabilities/compiled-schemas.js';
import {
  agentPath,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  type Profile,
} from '@agent-registry/testkit';
import { register, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { bearerInject, startWithAgent } from '../../../support/registry-setup.js';

/** Poison input: every one is a 4xx with {error, details, code}, on both dialects. */
describe('poison input is refused, cheaply and with the right 4xx', () => {
  let registry: TestRegistry;
  let caller: Registered;
  before(async () => {
    ({ registry, agent: caller } = await startWithAgent());
  });
  after(() => registry.close());

  const inject = bearerInject(() => registry);

  const assertError = (
    response: { statusCode: number; body: string; json(): { code: string; details: string; error: string } },
    status: number,
    code: string,
    details?: RegExp,
  ): void => {
    assert.equal(response.statusCode, status, response.body);
    const body = response.json();
    assert.equal(body.code, code, response.body);
    assert.equal(typeof body.error, 'string');
    if (details !== undefined) assert.match(body.details, details);
  };

  /** A queue-mode agent offering one capability with this input schema. */
  async function workerWith(inputSchema: Record<string, unknown>): Promise<Registered> {
    const worker = await register(registry, undefined, {
      name: 'Schema worker',
      capabilities: [{ type: 'check', input_schema: inputSchema }],
    });
    const configured = await inject('PUT', agentPath(worker.did, '/invocation'), worker.token, {
      enabled: true,
      delivery_mode: 'queue',
    });
    assert.equal(configured.statusCode, 200, configured.body);
    return worker;
  }

  const invoke = (target: string, input: unknown, timeoutMs = 100) =>
    inject('POST', '/api/invoke', caller.token, {
      target_did: target,
      capability: 'check',
      input,
      timeout_ms: timeoutMs,
    });

  describe('item 2: registration checks the signature before it compiles anything', () => {
    /** Three schemas of 1,500 properties each: about 200 KB, as in the report. */
    const hugeProfile = (): Profile => ({
      name: 'Stall',
      capabilities: [0, 1, 2].map((index) => ({
        type: `stall-${index}`,
        input_schema: {
          type: 'object',
          properties: Object.fromEntries(
            Array.from({ length: 1500 }, (_, property) => [
              `p${property}`,
              { type: 'string', description: 'padding' },
            ]),
          ),
        },
      })),
    });

    test('the body of the report is about 200 KB', () => {
      const bytes = JSON.stringify(hugeProfile()).length;
      assert.ok(bytes > 150_000 && bytes < 250_000, String(bytes));
    });

    test('timestamp 1 and a zero signature: 400 TIMESTAMP_OUT_OF_RANGE, nothing compiled', async () => {
      const before = registry.ctx.capabilitySchemas.compilations;
      const response = await inject('POST', '/api/agents/register', undefined, {
        public_key: ed25519Agent().publicKey,
        profile: hugeProfile(),
        timestamp: 1,
        signature: '00'.repeat(64),
      });
      assertError(response, 400, 'TIMESTAMP_OUT_OF_RANGE');
      assert.equal(registry.ctx.capabilitySchemas.compilations, before);
    });

    test('a current timestamp and a zero signature: 400 INVALID_SIGNATURE, nothing compiled', async () => {
      const before = registry.ctx.capabilitySchemas.compilations;
      const response = await inject('POST', '/api/agents/register', undefined, {
        public_key: ed25519Agent().publicKey,
        profile: hugeProfile(),
        timestamp: registry.clock.now(),
        signature: '00'.repeat(64),
      });
      assertError(response, 400, 'INVALID_SIGNATURE');
      assert.equal(registry.ctx.capabilitySchemas.compilations, before);
    });

    test('signed, but over the limits: 400 CAPABILITY_SCHEMA_TOO_LARGE, nothing compiled or stored', async () => {
      const before = registry.ctx.capabilitySchemas.compilations;
      const agent = ed25519Agent();
      const response = await inject(
        'POST',
        '/api/agents/register',
        undefined,
        await registrationBody(agent, hugeProfile(), registry.clock.now()),
      );
      assertError(response, 400, 'CAPABILITY_SCHEMA_TOO_LARGE', /capabilities\[0\]\.input_schema .*at most/);
      assert.equal(registry.ctx.capabilitySchemas.compilations, before);
      const found = await inject('GET', '/api/agents/search?capability=stall-0');
      assert.equal(found.json().total, 0);
    });

    test('each limit is enforced by name: properties, depth, subschemas, bytes, total per profile', async () => {
      const { did, token } = await register(registry);
      const update = (capabilities: unknown) => inject('PUT', agentPath(did), token, { capabilities });
      const withProperties = (count: number) => ({
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, {}])),
      });
      assertError(
        await update([{ type: 'a', input_schema: withProperties(129) }]),
        400,
        'CAPABILITY_SCHEMA_TOO_LARGE',
        /129 properties; at most 128/,
      );
      assert.equal((await update([{ type: 'a', input_schema: withProperties(128) }])).statusCode, 200);
      let deep: Record<string, unknown> = { type: 'string' };
      for (let level = 0; level < 9; level++) deep = { type: 'object', properties: { x: deep } };
      assertError(
        await update([{ type: 'a', output_schema: deep }]),
        400,
        'CAPABILITY_SCHEMA_TOO_LARGE',
        /output_schema nests deeper than 16/,
      );
      assertError(
        await update([{ type: 'a', input_schema: { anyOf: Array.from({ length: 300 }, () => ({})) } }]),
        400,
        'CAPABILITY_SCHEMA_TOO_LARGE',
        /301 subschemas; at most 256/,
      );
      assertError(
        await update([{ type: 'a', input_schema: { description: 'x'.repeat(17_000) } }]),
        400,
        'CAPABILITY_SCHEMA_TOO_LARGE',
        /bytes of JSON; at most 16384/,
      );
      const fiveSchemas = Array.from({ length: 5 }, (_, i) => ({
        type: `t${i}`,
        input_schema: { description: 'x'.repeat(15_000) },
      }));
      assertError(
        await update(fiveSchemas),
        400,
        'CAPABILITY_SCHEMA_TOO_LARGE',
        /profile capabilities carry/,
      );
    });

    test('a signed registration within the limits compiles its schemas (the counter is live)', async () => {
      const before = registry.ctx.capabilitySchemas.compilations;
      await register(registry, undefined, {
        name: 'Small schema',
        capabilities: [{ type: 'small', input_schema: { type: 'object', properties: { unique_0: {} } } }],
      });
      assert.equal(registry.ctx.capabilitySchemas.compilations, before + 1);
    });

    test('the limits are stated in the OpenAPI document', async () => {
      const document = JSON.stringify((await inject('GET', '/openapi.json')).json());
      assert.ok(document.includes('16384 bytes'), 'the byte limit');
      assert.ok(document.includes('128 properties'), 'the property limit');
    });
  });

  describe('item 3: patterns run in linear time', () => {
    const backtracking = '^([a-z]|[a-z0-9])*$';

    test(
      'a pattern that backtracks exponentially under a backtracking engine answers at once',
      {
        timeout: 30_000,
      },
      async () => {
        const worker = await workerWith({
          type: 'object',
          required: ['s'],
          properties: { s: { type: 'string', pattern: backtracking } },
        });
        // 40 characters would take a backtracking engine about 2^40 steps; 10,000 would never end.
        for (const length of [40, 10_000]) {
          const refused = await invoke(worker.did, { s: `${'a'.repeat(length)}!` });
          assertError(refused, 400, 'INPUT_SCHEMA_MISMATCH', /must match pattern/);
        }
        // A matching input passes validation and reaches the (idle) worker: the deadline answers.
        const accepted = await invoke(worker.did, { s: 'a'.repeat(10_000) });
        assert.equal(accepted.statusCode, 504, accepted.body);
      },
    );

    test('patternProperties keys run on the same engine', { timeout: 30_000 }, async () => {
      const worker = await workerWith({
        type: 'object',
        patternProperties: { [backtracking]: { type: 'integer' } },
      });
      const matchingKey = 'a'.repeat(10_000);
      assertError(await invoke(worker.did, { [matchingKey]: 'text' }), 400, 'INPUT_SCHEMA_MISMATCH');
      // A key the pattern does not match is unconstrained.
      assert.equal((await invoke(worker.did, { [`${matchingKey}!`]: 'text' })).statusCode, 504);
    });

    test('backreferences cannot run in linear time and are refused when published', async () => {
      const { did, token } = await register(registry);
      const response = await inject('PUT', agentPath(did), token, {
        capabilities: [{ type: 'x', output_schema: { type: 'string', pattern: '^(a)\\1$' } }],
      });
      assertError(response, 400, 'INVALID_CAPABILITY_SCHEMA', /RE2/);
    });
  });

  describe('item 4: uniqueItems must be bounded', () => {
    let agent: Registered;
    before(async () => {
      agent = await register(registry);
    });
    const publish = (inputSchema: Record<string, unknown>) =>
      inject('PUT', agentPath(agent.did), agent.token, {
        capabilities: [{ type: 'list', input_schema: inputSchema }],
      });

    test('untyped uniqueItems without maxItems is refused, also when nested', async () => {
      assertError(
        await publish({ type: 'array', uniqueItems: true }),
        400,
        'INVALID_CAPABILITY_SCHEMA',
        /uniqueItems at \/ without a bound/,
      );
      assertError(
        await publish({ type: 'object', properties: { list: { uniqueItems: true, maxItems: 33 } } }),
        400,
        'INVALID_CAPABILITY_SCHEMA',
        /uniqueItems at \/properties\/list/,
      );
    });

    test('bounded forms are accepted: maxItems <= 32, or scalar item types (hashed in one pass)', async () => {
      assert.equal((await publish({ type: 'array', uniqueItems: true, maxItems: 32 })).statusCode, 200);
      assert.equal(
        (await publish({ type: 'array', uniqueItems: true, items: { type: ['string', 'integer'] } }))
          .statusCode,
        200,
      );
    });

    test(
      'an 80,000-item array against a scalar uniqueItems schema is answered',
      { timeout: 30_000 },
      async () => {
        const worker = await workerWith({
          type: 'object',
          properties: { list: { type: 'array', uniqueItems: true, items: { type: 'integer' } } },
        });
        const list = Array.from({ length: 80_000 }, (_, i) => i);
        list.push(5);
        assertError(await invoke(worker.did, { list }), 400, 'INPUT_SCHEMA_MISMATCH', /duplicate/);
      },
    );
  });

  describe('validation cost beyond patterns: off the event loop, with a hard limit', () => {
    test(
      'an anyOf of 250 branches against 90,000 items is stopped at the limit; the loop stays free',
      {
        timeout: 60_000,
      },
      async () => {
        const worker = await workerWith({
          type: 'object',
          properties: {
            list: {
              type: 'array',
              items: {
                anyOf: Array.from({ length: 250 }, (_, i) => ({ type: 'object', required: [`k${i}`] })),
              },
            },
          },
        });
        // Every item matches only the last branch: about 22 million branch checks, tens of seconds.
        const list = Array.from({ length: 90_000 }, () => ({ k249: 1 }));
        let settled = false;
        const costly = invoke(worker.did, { list }, 60_000).finally(() => {
          settled = true;
        });
        const health = await inject('GET', '/healthz');
        assert.equal(health.statusCode, 200);
        assert.equal(settled, false, 'healthz answered while the validation was still running');
        assertError(await costly, 400, 'INPUT_VALIDATION_TIMEOUT', /took longer than 1000 ms/);
        // The stopped worker is replaced: the next invocation is checked as usual.
        assertError(await invoke(worker.did, { list: [1] }), 400, 'INPUT_SCHEMA_MISMATCH');
        assert.equal((await invoke(worker.did, { list: [{ k0: 1 }] })).statusCode, 504);
      },
    );
  });

  describe('item 5: the compiled-schema cache is bounded by bytes', () => {
    test('it keeps at most its byte budget, evicting the least recently used', () => {
      const schemas = new CompiledSchemas(10_000);
      const schema = (index: number) => JSON.stringify({ description: `${index} ${'x'.repeat(1000)}` });
      for (let index = 0; index < 50; index++) schemas.validator(schema(index));
      assert.equal(schemas.compilations, 50);
      assert.ok(schemas.cachedBytes <= 10_000, String(schemas.cachedBytes));
      assert.ok(schemas.cachedBytes > 8_000, 'the budget is used, not left empty');
      schemas.validator(schema(49));
      assert.equal(schemas.compilations, 50, 'the most recent is still cached');
      schemas.validator(schema(0));
      assert.equal(schemas.compilations, 51, 'the oldest was evicted and compiles again');
      schemas.validator(JSON.stringify({ description: 'y'.repeat(20_000) }));
      assert.ok(schemas.cachedBytes <= 10_000, 'a schema over the whole budget is not kept');
    });
  });

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
