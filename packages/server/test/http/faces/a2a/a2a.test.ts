import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  Role,
  TaskState,
  canonicalizeAgentCard,
  verifyAgentCardSignature,
  type Message,
  type SendMessageRequest,
  type Task,
} from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import * as jose from 'jose';
import { agentPath } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { http } from '../../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
  type QueueWorker,
} from '../../../support/faces-helpers.js';

/** Cards and JSON-RPC answers, read as loose JSON in assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const translateSchema = {
  type: 'object',
  properties: { text: { type: 'string' }, to: { type: 'string', enum: ['fr', 'de'] } },
  required: ['text', 'to'],
};

function message(input: unknown, metadata?: Record<string, unknown>): SendMessageRequest {
  const msg: Message = {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: input }, metadata: undefined, filename: '', mediaType: '' }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: '', message: msg, configuration: undefined, metadata: undefined };
}

function textMessage(text: string, metadata?: Record<string, unknown>): SendMessageRequest {
  const request = message({}, metadata);
  request.message!.parts = [
    { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
  ];
  return request;
}

const uppercaseSchema = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1 }, locale: { type: 'string' } },
  required: ['text'],
};

const asTask = (result: Message | Task): Task => {
  assert.ok('status' in result, 'the answer is a task');
  return result as Task;
};

const dataOf = (task: Task): unknown => {
  const part = task.artifacts[0]?.parts[0]?.content;
  assert.equal(part?.$case, 'data');
  return part.value;
};

const statusText = (task: Task): string =>
  task.status?.message?.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('') ?? '';

describe('A2A face: agent cards and invocation through the official A2A client', () => {
  let registry: ListeningRegistry;
  let caller: Registered;
  let worker: QueueWorker;
  let multi: QueueWorker;
  let upper: QueueWorker;
  let base: string;
  let client: Client;
  const auth = () => ({ serviceParameters: { authorization: `Bearer ${caller.token}` } });
  /** A raw v1.0 JSON-RPC call, for what the client cannot send (unknown agents, other versions). */
  const rpcV1 = async (url: string, method: string, params: Record<string, unknown>, version = '1.0') => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${caller.token}`,
        'a2a-version': version,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method, params }),
    });
    assert.equal(response.status, 200);
    return (await response.json()) as { result?: Json; error: { code: number; message: string } };
  };

  before(async () => {
    registry = await startListeningRegistry();
    caller = await register(registry);
    worker = await queueWorker(registry, {
      name: 'A2A translator',
      description: 'Translates via A2A',
      capabilities: [
        {
          type: 'translate',
          description: 'Translate text',
          tags: ['fr'],
          input_schema: translateSchema,
          output_schema: { type: 'object', properties: { text: { type: 'string' } } },
        },
      ],
    });
    multi = await queueWorker(registry, {
      name: 'Two skills',
      capabilities: [{ type: 'echo' }, { type: 'reverse' }],
    });
    upper = await queueWorker(registry, {
      name: 'Shouter',
      capabilities: [
        { type: 'uppercase', input_schema: uppercaseSchema },
        {
          type: 'text.count_words/v2',
          input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
        },
      ],
    });
    base = `${registry.url}/a2a/${encodeURIComponent(worker.did)}/`;
    client = await new ClientFactory().createFromUrl(base);
  });
  after(() => registry?.close());

  test('the card: skills from capabilities, schemas in the extension, JSON-RPC interface at the base', async () => {
    const response = await fetch(`${base}.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('cache-control') ?? '', /max-age=\d+/);
    const etag = response.headers.get('etag');
    assert.ok(etag);
    const card = (await response.json()) as Json;
    assert.equal(card.name, 'A2A translator');
    assert.deepEqual(card.provider, { url: registry.url, organization: 'Agent Registry' });
    assert.deepEqual(card.supportedInterfaces[0], {
      url: base,
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    });
    assert.equal(card.skills[0].id, 'translate');
    assert.equal(card.skills[0].name, 'Translate');
    assert.deepEqual(card.skills[0].tags, ['fr']);
    // Two required properties: no single place for a text, so JSON only.
    assert.deepEqual(card.skills[0].inputModes, ['application/json']);
    assert.deepEqual(card.capabilities.extensions[0].params.schemas.translate.input_schema, translateSchema);
    assert.equal(card.securitySchemes.registryToken.httpAuthSecurityScheme.scheme, 'Bearer');

    const again = await fetch(`${base}.well-known/agent-card.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);

    // The client parsed the same card.
    const parsed = await client.getAgentCard();
    assert.equal(parsed.skills[0]?.id, 'translate');
  });

  test('the card signature verifies against /.well-known/jwks.json with jose', async () => {
    const card = (await (await fetch(`${base}.well-known/agent-card.json`)).json()) as Json;
    assert.equal(card.signatures.length, 1);
    const jwks = jose.createRemoteJWKSet(new URL(`${registry.url}/.well-known/jwks.json`));
    const signature = card.signatures[0];
    const header = jose.decodeProtectedHeader(signature);
    assert.equal(header.alg, 'EdDSA');
    assert.equal(header.jku, `${registry.url}/.well-known/jwks.json`);
    const payload = jose.base64url.encode(canonicalizeAgentCard(card as never));
    await jose.flattenedVerify(
      { payload, protected: signature.protected, signature: signature.signature },
      jwks,
    );

    // A changed card no longer verifies.
    const forged = { ...card, name: 'Someone else' };
    const forgedPayload = jose.base64url.encode(canonicalizeAgentCard(forged as never));
    await assert.rejects(
      jose.flattenedVerify(
        { payload: forgedPayload, protected: signature.protected, signature: signature.signature },
        jwks,
      ),
    );

    // And the SDK's own verifier agrees.
    const keys = (await http(registry, 'GET', '/.well-known/jwks.json')).body.keys as jose.JWK[];
    // It takes the card in its JSON form, as served.
    await verifyAgentCardSignature(async (kid) => keys.find((key) => key.kid === kid)!)(card as never);
  });

  test('the registry card and the links from the profile and the DID document', async () => {
    const registryCard = (await http(registry, 'GET', '/.well-known/agent-card.json')).body as Record<
      string,
      Json
    >;
    assert.deepEqual(
      registryCard.skills.map((skill: { id: string }) => skill.id),
      ['search', 'invoke'],
    );
    assert.equal(registryCard.signatures.length, 1);

    const profile = (await http(registry, 'GET', agentPath(worker.did))).body as {
      endpoints: { type: string; url: string }[];
    };
    assert.ok(
      profile.endpoints.some(
        (e) => e.type === 'a2a_agent_card' && e.url === `${base}.well-known/agent-card.json`,
      ),
    );
    assert.ok(
      profile.endpoints.some(
        (e) => e.type === 'mcp' && e.url === `${registry.url}/mcp/agents/${encodeURIComponent(worker.did)}`,
      ),
    );
    const did = (await http(registry, 'GET', `/api/did/${encodeURIComponent(worker.did)}`)).body as {
      service: { id: string; type: string; serviceEndpoint: string }[];
    };
    assert.deepEqual(
      did.service.find((service) => service.type === 'A2AAgentCard'),
      {
        id: `${worker.did}#a2a`,
        type: 'A2AAgentCard',
        serviceEndpoint: `${base}.well-known/agent-card.json`,
      },
    );
  });

  test('sendMessage runs the invocation through the broker and answers a completed task', async () => {
    const answered = worker.serveOne((input) => ({ text: `bonjour (${String(input.text)})` }));
    const task = asTask(await client.sendMessage(message({ text: 'hello', to: 'fr' }), auth()));
    const taskId = await answered;
    assert.equal(task.id, taskId);
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(dataOf(task), { text: 'bonjour (hello)' });

    const read = await client.getTask({ tenant: '', id: taskId }, auth());
    assert.equal(read.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(dataOf(read), { text: 'bonjour (hello)' });
  });

  test('the capability comes from metadata.capability, or a clear error lists the choices', async () => {
    const multiClient = await new ClientFactory().createFromUrl(
      `${registry.url}/a2a/${encodeURIComponent(multi.did)}`.concat('/'),
    );
    await assert.rejects(
      multiClient.sendMessage(message({ a: 1 }), auth()),
      /CAPABILITY_REQUIRED: .*echo, reverse/,
    );
    const answered = multi.serveOne((input) => ({ reversed: input }));
    const task = asTask(await multiClient.sendMessage(message({ a: 1 }, { capability: 'reverse' }), auth()));
    await answered;
    assert.deepEqual(dataOf(task), { reversed: { a: 1 } });
  });

  test('a skill takes a text part when its input has one required string property, and says so', async () => {
    const upperBase = `${registry.url}/a2a/${encodeURIComponent(upper.did)}/`;
    const card = (await (await fetch(`${upperBase}.well-known/agent-card.json`)).json()) as Json;
    assert.deepEqual(
      card.skills.map((skill: Json) => [skill.id, skill.name, skill.inputModes]),
      [
        ['uppercase', 'Uppercase', ['application/json', 'text/plain']],
        ['text.count_words/v2', 'Text count words v2', ['application/json']],
      ],
    );
    const upperClient = await new ClientFactory().createFromUrl(upperBase);
    assert.deepEqual((await upperClient.getAgentCard()).skills[0]?.inputModes, [
      'application/json',
      'text/plain',
    ]);

    // The text becomes the one required property; the agent sees ordinary JSON input.
    let seen: unknown;
    const answered = upper.serveOne((input) => {
      seen = input;
      return { text: String(input.text).toUpperCase() };
    });
    const task = asTask(
      await upperClient.sendMessage(textMessage('hello', { capability: 'uppercase' }), auth()),
    );
    await answered;
    assert.deepEqual(seen, { text: 'hello' });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(dataOf(task), { text: 'HELLO' });

    // Data parts keep working for the same skill.
    const viaData = upper.serveOne((input) => ({ echoed: input }));
    const dataTask = asTask(
      await upperClient.sendMessage(
        message({ text: 'x', locale: 'tr' }, { capability: 'uppercase' }),
        auth(),
      ),
    );
    await viaData;
    assert.deepEqual(dataOf(dataTask), { echoed: { text: 'x', locale: 'tr' } });

    // The input schema still applies to the mapped text.
    await assert.rejects(
      upperClient.sendMessage(textMessage('', { capability: 'uppercase' }), auth()),
      /INPUT_SCHEMA_MISMATCH/,
    );

    // A v0.3 client's text part is mapped the same way.
    const legacyAnswer = upper.serveOne((input) => ({ legacy: input }));
    const legacy = await fetch(upperBase, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm2',
            role: 'user',
            parts: [{ kind: 'text', text: 'old client' }],
            metadata: { capability: 'uppercase' },
          },
        },
      }),
    }).then((response) => response.json() as Promise<Json>);
    await legacyAnswer;
    assert.deepEqual(
      legacy.result.artifacts[0].parts[0].data,
      { legacy: { text: 'old client' } },
      JSON.stringify(legacy),
    );
  });

  test('a text part for a skill that takes JSON only is ContentTypeNotSupported (-32005)', async () => {
    await assert.rejects(client.sendMessage(textMessage('hello'), auth()), (error: Error) => {
      assert.match(
        error.message,
        /CONTENT_TYPE_NOT_SUPPORTED: "translate" does not take a text part: send its input as one data part/,
      );
      return true;
    });
    const rpc = await rpcV1(base, 'SendMessage', {
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hello' }] },
    });
    assert.equal(rpc.error.code, -32005);
    const upperBase = `${registry.url}/a2a/${encodeURIComponent(upper.did)}/`;
    const counted = await rpcV1(upperBase, 'SendMessage', {
      message: {
        messageId: 'm',
        role: 'ROLE_USER',
        parts: [{ text: 'one two' }],
        metadata: { capability: 'text.count_words/v2' },
      },
    });
    assert.equal(counted.error.code, -32005);
    // Two text parts, or a data part and nothing else wrong, stay request errors.
    const twoTexts = await rpcV1(upperBase, 'SendMessage', {
      message: {
        messageId: 'm',
        role: 'ROLE_USER',
        parts: [{ text: 'a' }, { text: 'b' }],
        metadata: { capability: 'uppercase' },
      },
    });
    assert.equal(twoTexts.error.code, -32602);
    assert.match(twoTexts.error.message, /^INVALID_MESSAGE: .*got 0 data and 2 text part/);
    // An unknown capability is named as such, whatever the part.
    const unknown = await rpcV1(upperBase, 'SendMessage', {
      message: {
        messageId: 'm',
        role: 'ROLE_USER',
        parts: [{ text: 'a' }],
        metadata: { capability: 'nope' },
      },
    });
    assert.match(unknown.error.message, /^CAPABILITY_NOT_OFFERED: .*uppercase/);
  });

  test('agent failure and timeout are the failed state with the reason', async () => {
    const answered = worker.serveOne(() => 'out of ink');
    const failed = asTask(await client.sendMessage(message({ text: 'x', to: 'fr' }), auth()));
    await answered;
    assert.equal(failed.status?.state, TaskState.TASK_STATE_FAILED);
    assert.match(statusText(failed), /^AGENT_ERROR: The agent reported: out of ink/);

    const timedOut = asTask(
      await client.sendMessage(message({ text: 'x', to: 'fr' }, { timeout_ms: 100 }), auth()),
    );
    assert.equal(timedOut.status?.state, TaskState.TASK_STATE_FAILED);
    assert.match(statusText(timedOut), /^INVOCATION_TIMEOUT: /);
    const read = await client.getTask({ tenant: '', id: timedOut.id }, auth());
    assert.equal(read.status?.state, TaskState.TASK_STATE_FAILED);
  });

  test('caller mistakes are A2A errors with the registry code', async () => {
    await assert.rejects(client.sendMessage(message({ text: 1, to: 'fr' }), auth()), (error: Error) => {
      assert.match(error.message, /INPUT_SCHEMA_MISMATCH: .*text must be string/);
      return true;
    });
    await assert.rejects(
      client.sendMessage(message({ text: 'x'.repeat(1024 * 1024), to: 'fr' }), auth()),
      /PAYLOAD_TOO_LARGE: input is \d+ bytes of JSON; the limit is 1048576 bytes/,
    );
    await assert.rejects(
      client.sendMessage(message({ text: 'x', to: 'fr' }, { timeout_ms: 1 }), auth()),
      /VALIDATION_FAILED: timeout_ms must be >= 100/,
    );
    await assert.rejects(client.getTask({ tenant: '', id: randomUUID() }, auth()), /TASK_NOT_FOUND/);
  });

  test('a wrong or missing token is a 401', async () => {
    await assert.rejects(
      client.sendMessage(message({ text: 'x', to: 'fr' }), {
        serviceParameters: { authorization: `Bearer ${caller.token}x` },
      }),
      /401.*TOKEN_INVALID/s,
    );
    await assert.rejects(client.sendMessage(message({ text: 'x', to: 'fr' })), /401.*TOKEN_MISSING/s);
    // The refusal says where a token comes from.
    const bare = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
    });
    assert.equal(bare.status, 401);
    assert.match(((await bare.json()) as { details: string }).details, /`agent-registry token`/);
  });

  test('unknown and deactivated agents: no card, and a clear error at the base', async () => {
    const unknownDid = `did:web:${registry.config.identity.didWebDomain}:agent:0123456789abcdef0123456789abcdef`;
    const unknownBase = `${registry.url}/a2a/${encodeURIComponent(unknownDid)}/`;
    await assert.rejects(new ClientFactory().createFromUrl(unknownBase), /404/);
    const rpc = await rpcV1(unknownBase, 'SendMessage', {
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { a: 1 } }] },
    });
    assert.equal(rpc.error.code, -32602);
    assert.match(rpc.error.message, /^AGENT_NOT_FOUND: No active agent is registered with DID/);

    const gone = await queueWorker(registry, { name: 'Gone', capabilities: [{ type: 'echo' }] });
    const goneBase = `${registry.url}/a2a/${encodeURIComponent(gone.did)}/`;
    const goneClient = await new ClientFactory().createFromUrl(goneBase);
    assert.equal((await http(registry, 'DELETE', agentPath(gone.did), gone.token)).status, 200);
    await assert.rejects(goneClient.sendMessage(message({ a: 1 }), auth()), /AGENT_NOT_FOUND/);
    assert.equal((await fetch(`${goneBase}.well-known/agent-card.json`)).status, 404);
  });

  test('delivery mode none: a card without an invocable interface', async () => {
    const quiet = await register(registry);
    const card = (
      await http(registry, 'GET', `/a2a/${encodeURIComponent(quiet.did)}/.well-known/agent-card.json`)
    ).body as Record<string, unknown>;
    assert.equal(card.supportedInterfaces, undefined);
    assert.ok(Array.isArray(card.skills));
  });

  test('the base without the slash answers the same', async () => {
    const noSlash = base.slice(0, -1);
    assert.equal((await fetch(noSlash)).status, 200);
    const rpc = await rpcV1(noSlash, 'GetTask', { id: randomUUID() });
    assert.equal(rpc.error.code, -32001);
  });

  test('streaming and push notifications are unsupported operations, an unknown task to cancel is not found, not crashes', async () => {
    const rpc = async (method: string, params: Record<string, unknown>, version = '1.0') => ({
      body: await rpcV1(base, method, params, version),
    });
    const stream = await rpc('SendStreamingMessage', {
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { text: 'x', to: 'fr' } }] },
    });
    assert.equal(stream.body.error.code, -32004);
    assert.equal((await rpc('CancelTask', { id: 'x' })).body.error.code, -32001);
    assert.equal((await rpc('SubscribeToTask', { id: 'x' })).body.error.code, -32004);
    assert.equal(
      (await rpc('CreateTaskPushNotificationConfig', { taskId: 'x', url: 'https://e.x' })).body.error.code,
      -32003,
    );
    assert.equal((await rpc('GetTask', { id: 'x' }, '9.9')).body.error.code, -32009);
    // v0.3 clients (no A2A-Version header) use message/send.
    const legacyAnswer = worker.serveOne((input) => ({ legacy: input.text }));
    const legacy = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm1',
            role: 'user',
            parts: [{ kind: 'data', data: { text: 'old', to: 'fr' } }],
          },
        },
      }),
    }).then((response) => response.json() as Promise<Json>);
    await legacyAnswer;
    assert.equal(legacy.result.status.state, 'completed', JSON.stringify(legacy));
    assert.deepEqual(legacy.result.artifacts[0].parts[0].data, { legacy: 'old' });
  });
});
