import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { ERROR_CODES } from '../../../../src/kernel/error-codes.js';
import { ed25519Agent, registrationBody } from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../../../../..');
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  tags?: string[];
  description?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: Json; examples?: unknown; example?: unknown }> };
  responses: Record<
    string,
    { description: string; headers?: Json; content?: Record<string, { schema: Json }> }
  >;
}
interface Document {
  info: { license?: { name: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; headers: Record<string, Json> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Transport {
  call(
    method: string,
    url: string,
    options?: { body?: unknown; token?: string },
  ): Promise<{ status: number; body: unknown }>;
}

function operations(document: Document): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([route, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      method,
      path: route,
      operation: item[method] as Operation,
    })),
  );
}

/**
 * Checks responses against the document the way a validating proxy would: the operation by path
 * template and method, the status must be documented, and a JSON body must match its schema.
 */
class ResponseValidator {
  private readonly ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    validateSchema: false,
    multipleOfPrecision: 8,
  });
  private readonly routes: { pattern: RegExp; template: string }[];
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly checked: string[] = [];

  constructor(private readonly document: Document) {
    addFormats(this.ajv);
    const rewritten = JSON.parse(
      JSON.stringify(document).replaceAll('"#/components/', '"doc#/components/'),
    ) as Json;
    this.ajv.addSchema({ $id: 'doc', components: rewritten.components } as Json);
    // Static paths before templated ones, as a router matches them (/api/agents/search before /api/agents/{did}).
    const templated = (template: string) => template.split('{').length;
    this.routes = Object.keys(document.paths)
      .sort((a, b) => templated(a) - templated(b))
      .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  }

  check(method: string, url: string, status: number, contentType: string, body: string): void {
    const pathname = new URL(url, 'http://registry').pathname;
    const route = this.routes.find((candidate) => candidate.pattern.test(pathname));
    assert.ok(route, `${method} ${pathname}: no path of the document matches`);
    const operation = this.document.paths[route.template]?.[method.toLowerCase()];
    assert.ok(operation, `${method} ${route.template} is not documented`);
    const response = operation.responses[String(status)];
    assert.ok(
      response,
      `${method} ${route.template} answered ${status}, which it does not document: ${body}`,
    );
    const schema = response.content?.['application/json']?.schema;
    if (schema === undefined) return;
    assert.match(contentType, /^application\/json/);
    const key = `${method} ${route.template} ${status}`;
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      const rewritten = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'),
      ) as Json;
      validate = this.ajv.compile(rewritten);
      this.compiled.set(key, validate);
    }
    const value: unknown = JSON.parse(body);
    assert.ok(
      validate(value),
      `${key} body does not match the document: ${this.ajv.errorsText(validate.errors)}: ${body}`,
    );
    this.checked.push(key);
  }
}

describe('OpenAPI document', () => {
  let registry: TestRegistry;
  let base: string;
  let document: Document;
  let dir: string;

  before(async () => {
    registry = await startRegistry();
    await registry.app.listen({ port: 0, host: '127.0.0.1' });
    const address = registry.app.server.address();
    assert.ok(address !== null && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
    document = (await (await fetch(`${base}/openapi.json`)).json()) as Document;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-openapi-'));
  });
  after(async () => {
    await registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("passes Redocly's recommended lint with no error or warning", async () => {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(document));
    const redocly = path.join(repoRoot, 'node_modules/.bin/redocly');
    const config = path.join(repoRoot, 'redocly.yaml');
    const { stdout } = await run(redocly, ['lint', file, '--config', config, '--format', 'json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    assert.deepEqual(
      report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`),
      [],
    );
    assert.equal(report.totals.errors + report.totals.warnings, 0);
  });

  test('every operation has an operationId, tags, security and a description of each status', () => {
    const ids = new Set<string>();
    for (const { method, path: route, operation } of operations(document)) {
      const where = `${method.toUpperCase()} ${route}`;
      assert.ok(operation.operationId, `${where} has no operationId`);
      assert.ok(!ids.has(operation.operationId), `${where}: operationId ${operation.operationId} twice`);
      ids.add(operation.operationId);
      assert.ok((operation.tags ?? []).length > 0, `${where} has no tags`);
      assert.ok(Array.isArray(operation.security), `${where} has no security (public ones say [])`);
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(response.description.length >= 8, `${where} ${status} is not described`);
        assert.match(
          operation.description ?? '',
          new RegExp(`\`${status}\``),
          `${where}: description omits ${status}`,
        );
        assert.ok(response.headers?.['X-Request-Id'], `${where} ${status} lacks X-Request-Id`);
        if (status === '429' || status === '503')
          assert.ok(response.headers?.['Retry-After'], `${where} ${status}`);
        if (Number(status) >= 400)
          assert.deepEqual(response.content?.['application/json']?.schema, {
            $ref: '#/components/schemas/ErrorResponse',
          });
      }
      assert.ok(operation.responses['500'], `${where} lacks 500`);
      if (operation.requestBody !== undefined) {
        for (const status of ['400', '413', '415', '503'])
          assert.ok(operation.responses[status], `${where} has a body but does not document ${status}`);
      }
    }
    assert.ok(document.info.license?.name);
  });

  test('routes share the named component schemas instead of inlining copies', () => {
    const schemas = document.components.schemas;
    for (const name of [
      'AgentProfile',
      'Review',
      'Task',
      'SearchHit',
      'DIDDocument',
      'ErrorResponse',
      'PendingTask',
    ])
      assert.ok(schemas[name], `components.schemas.${name} is missing`);
    const text = JSON.stringify(document.paths);
    for (const name of [
      'AgentProfile',
      'Review',
      'Task',
      'SearchHit',
      'DIDDocument',
      'RegisterRequest',
      'InvokeRequest',
    ])
      assert.match(text, new RegExp(`"#/components/schemas/${name}"`), `${name} is never referenced`);
    const content = (route: string, method: string, status: string) =>
      document.paths[route]?.[method]?.responses[status]?.content?.['application/json']?.schema;
    assert.deepEqual(content('/api/agents/{did}', 'get', '200'), {
      $ref: '#/components/schemas/AgentProfile',
    });
    assert.deepEqual(content('/api/tasks/{id}', 'get', '200'), { $ref: '#/components/schemas/Task' });
  });

  test('constraints are in the schema: codes, rating, key_type, hex patterns, URIs, chain_id when secp256k1', () => {
    const schemas = document.components.schemas as Record<
      string,
      Json & { properties: Record<string, Json> }
    >;
    assert.deepEqual(schemas.ErrorResponse!.properties.code!.enum, [...ERROR_CODES]);
    const review = schemas.SubmitReviewRequest!;
    assert.deepEqual(
      [
        review.properties.rating!.minimum,
        review.properties.rating!.maximum,
        review.properties.rating!.multipleOf,
      ],
      [1, 10, 0.01],
    );
    const register = schemas.RegisterRequest!;
    assert.equal(register.properties.key_type!.default, 'ed25519');
    assert.ok(register.properties.public_key!.pattern);
    assert.deepEqual(register.then, {
      properties: { chain_id: { type: 'string', description: 'The CAIP-2 chain' } },
      required: ['chain_id'],
    });
    assert.ok((schemas.DIDDocument!.properties.id as Json).pattern);
    assert.equal((schemas.AgentProfile!.properties.website as Json).format, 'uri');
    for (const [route, method] of [
      ['/api/agents/register', 'post'],
      ['/api/invoke', 'post'],
      ['/api/reviews', 'post'],
    ] as const) {
      const body = document.paths[route]?.[method]?.requestBody?.content['application/json'];
      const ref =
        String(body?.schema.$ref ?? '')
          .split('/')
          .pop() ?? '';
      assert.ok(body?.examples ?? body?.example ?? schemas[ref]?.examples, `${route} has no request example`);
    }
    const search = document.paths['/api/agents/search']?.get?.parameters ?? [];
    assert.ok(search.some((parameter) => parameter.name === 'q'));
    const tasks = document.paths['/api/agent/tasks']?.get?.parameters ?? [];
    for (const name of ['limit', 'wait'])
      assert.equal(
        tasks.find((parameter) => parameter.name === name)?.required ?? false,
        false,
        `${name} is optional`,
      );
  });

  test('generated TypeScript types compile a typed client flow under --strict, and its responses match the document', async () => {
    const api = astToString(await openapiTS(JSON.parse(JSON.stringify(document)) as never));
    fs.writeFileSync(path.join(dir, 'api.ts'), api);
    fs.copyFileSync(path.join(here, '../../../fixtures/typed-client-flow.ts.txt'), path.join(dir, 'flow.ts'));
    const program = ts.createProgram([path.join(dir, 'flow.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noUncheckedIndexedAccess: true,
      types: [],
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    assert.deepEqual(diagnostics, []);

    const validator = new ResponseValidator(document);
    const transport: Transport = {
      call: async (method: string, url: string, options: { body?: unknown; token?: string } = {}) => {
        const headers: Record<string, string> = {};
        if (options.body !== undefined) headers['content-type'] = 'application/json';
        if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
        const init: RequestInit = { method, headers };
        if (options.body !== undefined) init.body = JSON.stringify(options.body);
        const response = await fetch(`${base}${url}`, init);
        const text = await response.text();
        validator.check(method, url, response.status, response.headers.get('content-type') ?? '', text);
        return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
      },
    };
    const flow = (await import(pathToFileURL(path.join(dir, 'flow.ts')).href)) as {
      typedFlow(
        transport: Transport,
        registration: (name: string, capability: string) => Promise<unknown>,
      ): Promise<{ output: Record<string, unknown>; hits: number }>;
    };
    const result = await flow.typedFlow(transport, async (name, capability) =>
      registrationBody(
        ed25519Agent(),
        { name, description: 'typed client flow', capabilities: [{ type: capability, description: null }] },
        registry.clock.now(),
      ),
    );
    assert.deepEqual(result.output, { text: 'bonjour (hello)' });
    assert.ok(validator.checked.length >= 8, validator.checked.join(', '));

    // Error responses of the main flows match the document too.
    const errors: [string, string, unknown?][] = [
      ['GET', '/api/agents/did%3Aweb%3Alocalhost%253A8080%3Aagent%3A00000000000000000000000000000000'],
      ['GET', '/api/agents/search?name=x'],
      ['POST', '/api/invoke', { target_did: 'x', capability: 'y', input: {} }],
      ['GET', '/api/tasks/none'],
      ['POST', '/api/reviews', { target_did: 'x', rating: 5 }],
      ['GET', '/api/agent/tasks'],
      ['GET', '/readyz'],
      ['GET', '/version'],
      ['GET', '/healthz'],
      ['GET', '/api/stats'],
    ];
    for (const [method, url, body] of errors)
      await transport.call(method, url, body === undefined ? {} : { body });
  });
});
