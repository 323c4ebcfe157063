import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledSchemas } from '../../../../src/modules/capabilities/compiled-schemas.js';
import { agentPath, ed25519Agent, registrationBody, type Profile } from '@agent-registry/testkit';
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
});
