import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import { agentPath } from '@agent-registry/testkit';
import { register, type Registered } from '@agent-registry/testkit/in-process';
import { canonicalize } from '../../../support/card-host.js';
import { http } from '../../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
  type QueueWorker,
} from '../../../support/faces-helpers.js';

const translateSchema = {
  type: 'object',
  properties: { text: { type: 'string', maxLength: 2_000_000 }, to: { type: 'string', enum: ['fr', 'de'] } },
  required: ['text', 'to'],
  additionalProperties: false,
};
const translatedSchema = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
};

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'registry-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  return client;
}

const textOf = (result: CallToolResult): string =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

describe('MCP face: the registry as an MCP server (official SDK client)', () => {
  let registry: ListeningRegistry;
  let caller: Registered;
  let worker: QueueWorker;
  let anonymous: Client;
  let authenticated: Client;

  before(async () => {
    registry = await startListeningRegistry();
    caller = await register(registry);
    worker = await queueWorker(registry, {
      name: 'Queue translator',
      description: 'Translates through a queue worker',
      capabilities: [
        {
          type: 'translate',
          description: 'Translate text',
          tags: ['fr'],
          input_schema: translateSchema,
          output_schema: translatedSchema,
        },
        { type: 'summarize text/v2' },
        { type: 'summarize:text/v2' },
      ],
      tags: ['language'],
    });
    anonymous = await connect(`${registry.url}/mcp`);
    authenticated = await connect(`${registry.url}/mcp`, caller.token);
  });
  after(async () => {
    await anonymous?.close();
    await authenticated?.close();
    await registry?.close();
  });

  test('the server card (SEP-2127) names the endpoint; /.well-known/mcp.json adds the tools and their digest', async () => {
    const card = await fetch(`${registry.url}/mcp/server-card`, {
      headers: { accept: 'application/mcp-server-card+json' },
    });
    assert.equal(card.status, 200);
    assert.match(card.headers.get('content-type') ?? '', /^application\/mcp-server-card\+json/);
    assert.equal(card.headers.get('access-control-allow-origin'), '*');
    assert.equal(card.headers.get('cache-control'), 'public, max-age=3600');
    const body = (await card.json()) as Record<string, unknown> & {
      remotes: { type: string; url: string }[];
    };
    assert.equal(body.$schema, 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json');
    assert.match(String(body.name), /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    assert.ok(String(body.description).length <= 100);
    assert.deepEqual(
      body.remotes.map(({ type, url }) => ({ type, url })),
      [{ type: 'streamable-http', url: `${registry.url}/mcp` }],
    );
    // The card agrees with what a connected client reads.
    assert.equal(body.version, anonymous.getServerVersion()?.version);
    const etag = card.headers.get('etag') ?? '';
    const again = await fetch(`${registry.url}/mcp/server-card`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);

    const catalog = (await (await fetch(`${registry.url}/.well-known/ai-catalog.json`)).json()) as {
      entries: { type: string; url: string }[];
    };
    const entry = catalog.entries.find((item) => item.type === 'application/mcp-server-card+json');
    assert.equal(entry?.url, `${registry.url}/mcp/server-card`);

    const wellKnown = (await (await fetch(`${registry.url}/.well-known/mcp.json`)).json()) as {
      name: string;
      tools: { name: string }[];
      _meta: Record<string, string>;
    };
    assert.equal(wellKnown.name, body.name);
    const { tools } = await anonymous.listTools();
    assert.deepEqual(wellKnown.tools, tools);
    const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const digest = `sha256:${createHash('sha256').update(canonicalize(sorted)).digest('hex')}`;
    assert.equal(wellKnown._meta['io.github.agent-registry/tools_digest'], digest);
  });

  test('lists the registry tools, each with an input and an output schema', async () => {
    const { tools } = await anonymous.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [
      'edit_review',
      'get_agent',
      'get_reputation',
      'get_reviews',
      'get_task',
      'invoke_agent',
      'list_watches',
      'remove_watch',
      'report_agent',
      'search_agents',
      'submit_review',
      'watch',
    ]);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
    }
    const invoke = tools.find((tool) => tool.name === 'invoke_agent')!;
    assert.deepEqual(invoke.inputSchema.required, ['target_did', 'capability', 'input']);
  });

  test('every argument of every registry tool has a description a model can act on', async () => {
    const { tools } = await anonymous.listTools();
    for (const tool of tools) {
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
        const description = (property as { description?: unknown }).description;
        assert.equal(typeof description, 'string', `${tool.name}.${name} has no description`);
        assert.ok((description as string).length >= 10, `${tool.name}.${name}: "${String(description)}"`);
      }
    }
    const describe = (tool: string, argument: string): string =>
      (
        tools.find((candidate) => candidate.name === tool)!.inputSchema.properties![argument] as {
          description: string;
        }
      ).description;
    assert.match(
      describe('invoke_agent', 'input'),
      /must match the capability's input_schema; see get_agent/,
    );
    assert.match(describe('invoke_agent', 'target_did'), /search_agents/);
    assert.match(describe('submit_review', 'call_record_id'), /invoke_agent/);
    assert.match(describe('get_task', 'task_id'), /invoke_agent/);
    assert.match(describe('edit_review', 'review_id'), /submit_review/);
  });

  test('an unknown tool is a JSON-RPC error whose message is not prefixed twice', async () => {
    await assert.rejects(anonymous.callTool({ name: 'no_such_tool', arguments: {} }), (error: Error) => {
      assert.equal(error.message.match(/MCP error/g)?.length, 1, error.message);
      assert.match(error.message, /^MCP error -32602: Unknown tool "no_such_tool"; tools: search_agents, /);
      return true;
    });
  });

  test('search_agents and get_agent answer structured content without a token', async () => {
    const found = await anonymous.callTool({ name: 'search_agents', arguments: { capability: 'translate' } });
    assert.equal(found.isError, undefined, textOf(found as CallToolResult));
    const structured = found.structuredContent as { agents: { did: string }[]; total: number };
    assert.equal(structured.total, 1);
    assert.equal(structured.agents[0]!.did, worker.did);

    const byTags = await anonymous.callTool({ name: 'search_agents', arguments: { tags: ['language'] } });
    assert.ok((byTags.structuredContent as { total: number }).total >= 1);

    const agent = await anonymous.callTool({ name: 'get_agent', arguments: { did: worker.did } });
    const profile = agent.structuredContent as {
      did: string;
      capabilities: { type: string; input_schema?: unknown }[];
      reputation_score: number;
    };
    assert.equal(profile.did, worker.did);
    assert.deepEqual(profile.capabilities[0]!.input_schema, translateSchema);
    assert.equal(typeof profile.reputation_score, 'number');
    assert.match(textOf(agent as CallToolResult), /Queue translator/);
  });

  test('get_reviews and get_reputation read the same data as REST', async () => {
    const reviews = await anonymous.callTool({ name: 'get_reviews', arguments: { did: worker.did } });
    assert.deepEqual(
      reviews.structuredContent,
      (await http(registry, 'GET', agentPath(worker.did, '/reviews'))).body,
    );
    const reputation = await anonymous.callTool({ name: 'get_reputation', arguments: { did: worker.did } });
    assert.deepEqual(
      reputation.structuredContent,
      (await http(registry, 'GET', agentPath(worker.did, '/reputation'))).body,
    );
  });

  test('invoke_agent runs a queue-mode agent end to end', async () => {
    const answered = worker.serveOne((input) => ({ text: `${String(input.text)} (${String(input.to)})` }));
    const result = (await authenticated.callTool({
      name: 'invoke_agent',
      arguments: { target_did: worker.did, capability: 'translate', input: { text: 'hello', to: 'fr' } },
    })) as CallToolResult;
    const taskId = await answered;
    assert.equal(result.isError, undefined, textOf(result));
    assert.deepEqual(result.structuredContent, {
      task_id: taskId,
      status: 'completed',
      output: { text: 'hello (fr)' },
    });
    const task = await http(registry, 'GET', `/api/tasks/${taskId}`, caller.token);
    assert.equal(task.body.status, 'completed');
  });

  test('a timed-out invocation is an isError result naming the outcome and the task', async () => {
    const result = (await authenticated.callTool({
      name: 'invoke_agent',
      arguments: {
        target_did: worker.did,
        capability: 'translate',
        input: { text: 'nobody answers', to: 'de' },
        timeout_ms: 100,
      },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    const text = textOf(result);
    assert.match(text, /^INVOCATION_TIMEOUT: the invocation timed out \(task [0-9a-f-]{36}\)/);
    // The next step is a tool, not an HTTP route the MCP user cannot call from here.
    assert.match(text, /Read the task later with get_task\.$/);
    assert.doesNotMatch(text, /\/api\//);
    const taskId = /task ([0-9a-f-]{36})/.exec(text)![1]!;
    assert.equal((await http(registry, 'GET', `/api/tasks/${taskId}`, caller.token)).body.status, 'timeout');
    const read = (await authenticated.callTool({
      name: 'get_task',
      arguments: { task_id: taskId },
    })) as CallToolResult;
    assert.equal((read.structuredContent as { status: string }).status, 'timeout');
  });

  test('get_task reads a task as GET /api/tasks/{id} does, for its creator only', async () => {
    const answered = worker.serveOne((input) => ({ text: `read ${String(input.text)}` }));
    const invoked = (await authenticated.callTool({
      name: 'invoke_agent',
      arguments: { target_did: worker.did, capability: 'translate', input: { text: 'me', to: 'fr' } },
    })) as CallToolResult;
    const taskId = await answered;
    assert.equal(invoked.isError, undefined, textOf(invoked));

    const read = (await authenticated.callTool({
      name: 'get_task',
      arguments: { task_id: taskId },
    })) as CallToolResult;
    assert.equal(read.isError, undefined, textOf(read));
    assert.deepEqual(
      read.structuredContent,
      (await http(registry, 'GET', `/api/tasks/${taskId}`, caller.token)).body,
    );
    assert.match(textOf(read), new RegExp(`^task ${taskId}: completed`));

    const stranger = await register(registry);
    const asStranger = await connect(`${registry.url}/mcp`, stranger.token);
    try {
      const refused = (await asStranger.callTool({
        name: 'get_task',
        arguments: { task_id: taskId },
      })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /^NOT_TASK_CREATOR: /);
    } finally {
      await asStranger.close();
    }
    const anonymousRead = (await anonymous.callTool({
      name: 'get_task',
      arguments: { task_id: taskId },
    })) as CallToolResult;
    assert.match(textOf(anonymousRead), /^TOKEN_MISSING: get_task acts as a registered agent/);
    const unknown = (await authenticated.callTool({
      name: 'get_task',
      arguments: { task_id: '00000000-0000-7000-8000-000000000000' },
    })) as CallToolResult;
    assert.match(textOf(unknown), /^TASK_NOT_FOUND: /);
  });

  test('submit_review closes the loop: a verified review citing the task, then edit_review', async () => {
    const reviewer = await register(registry);
    const client = await connect(`${registry.url}/mcp`, reviewer.token);
    try {
      const answered = worker.serveOne((input) => ({ text: `ok ${String(input.text)}` }));
      const invoked = (await client.callTool({
        name: 'invoke_agent',
        arguments: { target_did: worker.did, capability: 'translate', input: { text: 'loop', to: 'de' } },
      })) as CallToolResult;
      const taskId = await answered;
      assert.equal(invoked.isError, undefined, textOf(invoked));

      const submitted = (await client.callTool({
        name: 'submit_review',
        arguments: { target_did: worker.did, rating: 8.5, comment: 'Fast', call_record_id: taskId },
      })) as CallToolResult;
      assert.equal(submitted.isError, undefined, textOf(submitted));
      const review = submitted.structuredContent as { review_id: string; verified: boolean; rating: number };
      assert.equal(review.verified, true);
      assert.equal(review.rating, 8.5);
      // The same review service as REST: the review is in the agent's list.
      const listed = (await http(registry, 'GET', agentPath(worker.did, '/reviews'))).body.reviews as {
        review_id: string;
      }[];
      assert.ok(listed.some((entry) => entry.review_id === review.review_id));

      // A second review names the MCP tool and the id to use, not the HTTP route.
      const again = (await client.callTool({
        name: 'submit_review',
        arguments: { target_did: worker.did, rating: 3 },
      })) as CallToolResult;
      assert.equal(again.isError, true);
      const text = textOf(again);
      assert.match(text, /^REVIEW_EXISTS: You have already reviewed /);
      assert.match(text, new RegExp(`review_id ${review.review_id}.*edit_review`));
      assert.doesNotMatch(text, /\/api\/|PUT /);
      // REST keeps naming its own route.
      const rest = await http(registry, 'POST', '/api/reviews', reviewer.token, {
        target_did: worker.did,
        rating: 3,
      });
      assert.equal(rest.status, 409);
      assert.match(String(rest.body.details), /PUT \/api\/reviews\/\{review_id\}/);

      const edited = (await client.callTool({
        name: 'edit_review',
        arguments: { review_id: review.review_id, rating: 7 },
      })) as CallToolResult;
      assert.equal(edited.isError, undefined, textOf(edited));
      assert.deepEqual(
        [
          (edited.structuredContent as { rating: number }).rating,
          (edited.structuredContent as { comment: string }).comment,
        ],
        [7, 'Fast'],
      );
      const tooFar = (await client.callTool({
        name: 'edit_review',
        arguments: { review_id: review.review_id, rating: 1 },
      })) as CallToolResult;
      assert.match(textOf(tooFar), /^RATING_CHANGE_TOO_LARGE: /);

      const self = (await client.callTool({
        name: 'submit_review',
        arguments: { target_did: reviewer.did, rating: 10 },
      })) as CallToolResult;
      assert.match(textOf(self), /^SELF_REVIEW: /);
      const bad = (await client.callTool({
        name: 'submit_review',
        arguments: { target_did: caller.did, rating: 11 },
      })) as CallToolResult;
      assert.match(textOf(bad), /^INVALID_RATING: /);
    } finally {
      await client.close();
    }
    const anonymousReview = (await anonymous.callTool({
      name: 'submit_review',
      arguments: { target_did: worker.did, rating: 5 },
    })) as CallToolResult;
    assert.match(textOf(anonymousReview), /^TOKEN_MISSING: submit_review acts as a registered agent/);
  });

  test('an agent failure is an isError result with the reason', async () => {
    const answered = worker.serveOne(() => 'the dictionary is on fire');
    const result = (await authenticated.callTool({
      name: 'invoke_agent',
      arguments: { target_did: worker.did, capability: 'translate', input: { text: 'x', to: 'fr' } },
    })) as CallToolResult;
    await answered;
    assert.equal(result.isError, true);
    assert.match(textOf(result), /^AGENT_ERROR: the invocation failed \(task .*the dictionary is on fire/);
  });

  test('invoke_agent without a token is a tool error that says what to send', async () => {
    const result = (await anonymous.callTool({
      name: 'invoke_agent',
      arguments: { target_did: worker.did, capability: 'translate', input: { text: 'x', to: 'fr' } },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(textOf(result), /^TOKEN_MISSING: .*Authorization: Bearer <token>/);
  });

  test('a wrong token is refused at the HTTP level with 401', async () => {
    await assert.rejects(connect(`${registry.url}/mcp`, `${caller.token}x`), /401|TOKEN_INVALID/);
  });

  test('caller mistakes are tool errors with the REST error codes', async () => {
    const invoke = async (args: Record<string, unknown>) =>
      textOf(
        (await authenticated.callTool({
          name: 'invoke_agent',
          arguments: { target_did: worker.did, capability: 'translate', ...args },
        })) as CallToolResult,
      );
    assert.match(
      await invoke({ input: { text: 1, to: 'fr' } }),
      /^INPUT_SCHEMA_MISMATCH: .*text must be string/,
    );
    assert.match(
      await invoke({ input: { text: 'x'.repeat(1024 * 1024), to: 'fr' } }),
      /^PAYLOAD_TOO_LARGE: input is \d+ bytes of JSON; the limit is 1048576 bytes/,
    );
    assert.match(
      await invoke({ target_did: 'did:web:127.0.0.1:agent:00000000000000000000000000000000', input: {} }),
      /^(AGENT_NOT_FOUND|INVALID_DID): /,
    );
    assert.match(
      await invoke({ input: { text: 'x', to: 'fr' }, timeout_ms: 5 }),
      /^VALIDATION_FAILED: timeout_ms must be >= 100/,
    );
    assert.match(await invoke({ capability: 'nope', input: {} }), /^CAPABILITY_NOT_OFFERED: .*translate/);

    const retired = await queueWorker(registry, { name: 'Retired', capabilities: [{ type: 'echo' }] });
    assert.equal((await http(registry, 'DELETE', agentPath(retired.did), retired.token)).status, 200);
    assert.match(
      await invoke({ target_did: retired.did, capability: 'echo', input: {} }),
      /^AGENT_NOT_FOUND: No active agent is registered with DID/,
    );
  });

  test('the per-agent endpoint exposes each capability as a tool with its schemas', async () => {
    const client = await connect(
      `${registry.url}/mcp/agents/${encodeURIComponent(worker.did)}`,
      caller.token,
    );
    try {
      const { tools } = await client.listTools();
      // Titles read as titles and name the agent, so a client mixing several servers' tools can tell them apart.
      assert.deepEqual(
        tools.map((tool) => [tool.name, tool.title]),
        [
          ['translate', 'Translate (Queue translator)'],
          ['summarize_text_v2', 'Summarize text v2 (Queue translator)'],
          ['summarize_text_v2_2', 'Summarize text v2 (Queue translator)'],
        ],
      );
      for (const tool of tools) {
        assert.match(tool.description ?? '', new RegExp(`of the agent Queue translator \\(${worker.did}\\)`));
      }
      assert.match(tools[0]!.description ?? '', /^Translate text\. The "translate" capability/);
      assert.deepEqual(tools[0]!.inputSchema, translateSchema);
      assert.deepEqual(tools[0]!.outputSchema, translatedSchema);
      assert.deepEqual(tools[1]!.inputSchema, { type: 'object' });

      const answered = worker.serveOne((input) => ({ text: `direct ${String(input.text)}` }));
      const result = (await client.callTool({
        name: 'translate',
        arguments: { text: 'hi', to: 'fr' },
      })) as CallToolResult;
      await answered;
      assert.deepEqual(result.structuredContent, { text: 'direct hi' });

      const invalid = (await client.callTool({
        name: 'translate',
        arguments: { text: 'hi' },
      })) as CallToolResult;
      assert.equal(invalid.isError, true);
      assert.match(textOf(invalid), /^INPUT_SCHEMA_MISMATCH: .*must have required property 'to'/);

      // This endpoint has only the agent's tools: the next step names the registry's endpoint too.
      const failing = worker.serveOne(() => 'no dictionary');
      const failed = (await client.callTool({
        name: 'translate',
        arguments: { text: 'hi', to: 'de' },
      })) as CallToolResult;
      await failing;
      assert.match(
        textOf(failed),
        new RegExp(
          `^AGENT_ERROR: .*no dictionary\\. Read the task later with the get_task tool of ${registry.url}/mcp\\.$`,
        ),
      );
      assert.match(
        client.getInstructions() ?? '',
        new RegExp(`get_task.*submit_review, at ${registry.url}/mcp`),
      );
    } finally {
      await client.close();
    }
  });

  test('the per-agent endpoint: unknown and deactivated agents are 404s, non-invocable ones have no tools', async () => {
    const unknown = `${registry.url}/mcp/agents/${encodeURIComponent('did:web:127.0.0.1:agent:0123456789abcdef0123456789abcdef')}`;
    await assert.rejects(connect(unknown), /404|AGENT_NOT_FOUND/);

    const quiet = await register(registry);
    const client = await connect(`${registry.url}/mcp/agents/${encodeURIComponent(quiet.did)}`);
    try {
      assert.deepEqual((await client.listTools()).tools, []);
      assert.match(client.getInstructions() ?? '', /does not accept invocations/);
    } finally {
      await client.close();
    }

    const gone = await register(registry);
    assert.equal((await http(registry, 'DELETE', agentPath(gone.did), gone.token)).status, 200);
    await assert.rejects(
      connect(`${registry.url}/mcp/agents/${encodeURIComponent(gone.did)}`),
      /404|AGENT_NOT_FOUND/,
    );
  });

  test('the JSON-RPC routes stay out of the REST OpenAPI document', async () => {
    const paths = Object.keys((await http(registry, 'GET', '/openapi.json')).body.paths as object);
    assert.ok(paths.includes('/api/invoke'));
    assert.deepEqual(
      paths.filter((path) => /^\/(mcp|a2a)\b|agent-card/.test(path)),
      [],
    );
  });

  test('GET and DELETE answer 405: the endpoint is stateless', async () => {
    const response = await http(registry, 'GET', '/mcp');
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
  });
});

describe('MCP face: a registry shutting down mid-invocation', () => {
  test('the tool error points at get_task, not at the REST route', async () => {
    const registry = await startListeningRegistry();
    try {
      const caller = await register(registry);
      const worker = await queueWorker(registry, { name: 'Slow', capabilities: [{ type: 'echo' }] });
      const client = await connect(`${registry.url}/mcp`, caller.token);
      try {
        const blocked = client.callTool({
          name: 'invoke_agent',
          arguments: { target_did: worker.did, capability: 'echo', input: {}, timeout_ms: 300_000 },
        });
        // The task exists once the worker can see it; then the registry begins to shut down.
        let tasks: { task_id: string }[] = [];
        while (tasks.length === 0) {
          tasks = (await http(registry, 'GET', '/api/agent/tasks?wait=1', worker.token)).body
            .tasks as typeof tasks;
        }
        await registry.ctx.stopWaiters();
        const result = (await blocked) as CallToolResult;
        assert.equal(result.isError, true);
        assert.equal(
          textOf(result),
          `SHUTTING_DOWN: The registry is shutting down; read task ${tasks[0]!.task_id} later with get_task`,
        );
      } finally {
        await client.close();
      }
    } finally {
      await registry.close();
    }
  });
});
