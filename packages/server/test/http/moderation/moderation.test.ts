import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  appealMessage,
  checkProfileAgainstLeaf,
  verifyLogProof,
  type LogProof,
} from '@agent-registry/protocol';
import { agentPath, bearer } from '@agent-registry/testkit';
import { startRegistry, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { insertTask, registerNamed, startSecondNode } from '../../support/discovery-helpers.js';

const OPERATOR_TOKEN = 'moderation-operator-secret-0123';
const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };

type Node = Pick<TestRegistry, 'app'>;

const searchDids = async (node: Node, q: string): Promise<string[]> => {
  const response = await node.app.inject({
    method: 'GET',
    url: `/api/agents/search?q=${encodeURIComponent(q)}`,
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<{ agents: { did: string }[] }>().agents.map((agent) => agent.did);
};

const mcpSearchDids = async (node: Node, q: string): Promise<string[]> => {
  const response = await node.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_agents', arguments: { query: q } },
    },
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json<{ result: { structuredContent: { agents: { did: string }[] } } }>();
  return body.result.structuredContent.agents.map((agent) => agent.did);
};

/** What the other faces list for a text: ARD search results and the web search page. */
const otherFaces = async (node: Node, q: string, did: string): Promise<{ ard: boolean; web: boolean }> => {
  const ard = await node.app.inject({ method: 'POST', url: '/ard/search', payload: { query: { text: q } } });
  assert.equal(ard.statusCode, 200, ard.body);
  const web = await node.app.inject({ method: 'GET', url: `/?q=${encodeURIComponent(q)}` });
  assert.equal(web.statusCode, 200);
  // Only this agent matches the text: ARD lists it or nothing, the page links to its profile or not.
  return {
    ard: ard.json<{ results: unknown[] }>().results.length > 0,
    web: web.body.includes(encodeURIComponent(did)),
  };
};

const logSize = async (registry: TestRegistry): Promise<number> =>
  Number(
    (
      await registry.ctx.database.db
        .selectFrom('log_records')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow()
    ).count,
  );

describe('moderation: reports, suspension and restoration', () => {
  let registry: TestRegistry;
  let second: Awaited<ReturnType<typeof startSecondNode>>;
  let target: Registered;
  let reporter: Registered;
  let taskId: string;

  before(async () => {
    registry = await startRegistry({ FEDERATION_ADMIN_TOKEN: OPERATOR_TOKEN, REPORT_RATE_LIMIT: '3' });
    second = await startSecondNode(registry);
    target = await registerNamed(registry, 'Moderated Mallard', {
      capabilities: [{ type: 'general' }],
    });
    reporter = await registerNamed(registry, 'Reporting Robin');
    taskId = await insertTask(registry, reporter.did, target.did, 'failed');
  });
  after(async () => {
    await second.close();
    await registry.close();
  });

  const report = (token: string, payload: Record<string, unknown>) =>
    registry.app.inject({ method: 'POST', url: '/api/reports', headers: bearer(token), payload });

  test('a report naming a task is verified, listed for the operator, and not repeated', async () => {
    const created = await report(reporter.token, {
      target: target.did,
      reason: 'malware',
      details: 'It sent back a binary',
      task_id: taskId,
    });
    assert.equal(created.statusCode, 201, created.body);
    const receipt = created.json<{ id: string; verified: boolean; state: string }>();
    assert.equal(receipt.verified, true);
    assert.equal(receipt.state, 'open');

    const again = await report(reporter.token, { target: target.did, reason: 'spam' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json<{ code: string }>().code, 'REPORT_EXISTS');

    const anonymous = await registry.app.inject({ method: 'GET', url: '/api/admin/reports' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json<{ code: string }>().code, 'INVALID_ADMIN_TOKEN');

    const listed = await registry.app.inject({
      method: 'GET',
      url: `/api/admin/reports?target=${encodeURIComponent(target.did)}&reason=malware&state=open`,
      headers: operator,
    });
    assert.equal(listed.statusCode, 200, listed.body);
    const reports = listed.json<{
      reports: { id: string; reporter_did: string; task_id: string; verified: boolean }[];
    }>().reports;
    assert.deepEqual(
      reports.map((row) => [row.id, row.reporter_did, row.task_id, row.verified]),
      [[receipt.id, reporter.did, taskId, true]],
    );
  });

  test('bad reports are answered with what to fix', async () => {
    const self = await report(target.token, { target: target.did, reason: 'other' });
    assert.equal(self.json<{ code: string }>().code, 'SELF_REPORT');
    const nobody = await report(reporter.token, { target: 'no-such-remote-entry', reason: 'spam' });
    assert.equal(nobody.statusCode, 404);
    assert.equal(nobody.json<{ code: string }>().code, 'REPORT_TARGET_NOT_FOUND');
    const other = await registerNamed(registry, 'Unrelated Ugly Duckling');
    const notTheirs = await report(reporter.token, { target: other.did, reason: 'broken', task_id: taskId });
    assert.equal(notTheirs.statusCode, 400);
    assert.equal(notTheirs.json<{ code: string }>().code, 'REPORT_TASK_NOT_FOUND');
    const badReason = await report(reporter.token, { target: other.did, reason: 'ugly' });
    assert.equal(badReason.statusCode, 400);
    const long = await report(reporter.token, {
      target: other.did,
      reason: 'spam',
      details: 'x'.repeat(2001),
    });
    assert.equal(long.statusCode, 400);
  });

  test('a suspension hides the agent on both nodes, refuses it, shows why and is logged', async () => {
    assert.ok((await searchDids(registry, 'Mallard')).includes(target.did));
    assert.ok((await searchDids(second, 'Mallard')).includes(target.did));
    assert.deepEqual(await otherFaces(second, 'Moderated Mallard', target.did), { ard: true, web: true });
    const sizeBefore = await logSize(registry);

    const suspended = await registry.app.inject({
      method: 'POST',
      url: `/api/admin/agents/${encodeURIComponent(target.did)}/suspend`,
      headers: operator,
      payload: { reason: 'malware', note: 'Serves a binary' },
    });
    assert.equal(suspended.statusCode, 200, suspended.body);
    const decision = suspended.json<{ seq: number; action: string }>();
    assert.equal(decision.action, 'suspended');

    for (const node of [registry, second]) {
      assert.ok(!(await searchDids(node, 'Mallard')).includes(target.did));
      assert.ok(!(await mcpSearchDids(node, 'Mallard')).includes(target.did));
      assert.deepEqual(await otherFaces(node, 'Moderated Mallard', target.did), { ard: false, web: false });
      const profile = await node.app.inject({ method: 'GET', url: agentPath(target.did) });
      assert.equal(profile.statusCode, 200);
      const body = profile.json<{
        status: string;
        moderation: { state: string; reason: string; since: number };
      }>();
      assert.equal(body.status, 'suspended');
      assert.deepEqual(
        { state: body.moderation.state, reason: body.moderation.reason },
        { state: 'suspended', reason: 'malware' },
      );
      const invoked = await node.app.inject({
        method: 'POST',
        url: '/api/invoke',
        headers: bearer(reporter.token),
        payload: { target_did: target.did, capability: 'general', input: {} },
      });
      assert.equal(invoked.statusCode, 403, invoked.body);
      assert.equal(invoked.json<{ code: string }>().code, 'AGENT_SUSPENDED');
      const write = await node.app.inject({
        method: 'PUT',
        url: agentPath(target.did),
        headers: bearer(target.token),
        payload: { description: 'still here' },
      });
      assert.equal(write.statusCode, 403);
      assert.equal(write.json<{ code: string }>().code, 'AGENT_SUSPENDED');
    }

    const page = await registry.app.inject({
      method: 'GET',
      url: `/agents/${encodeURIComponent(target.did)}`,
    });
    assert.equal(page.statusCode, 200);
    assert.match(
      page.body,
      /<strong>Suspended<\/strong> by this registry&#39;s operator \(malware: Serves a binary\)|<strong>Suspended<\/strong> by this registry's operator \(malware: Serves a binary\)/,
    );
    assert.match(page.body, /agent-registry report/);

    // The profile's stamp (its status) and the decision's own event leaf.
    assert.equal(await logSize(registry), sizeBefore + 2);
    const event = await registry.ctx.database.db
      .selectFrom('log_records')
      .selectAll()
      .where('seq', '=', decision.seq)
      .executeTakeFirstOrThrow();
    assert.equal(event.operation, 'moderation.suspended');
    assert.deepEqual(JSON.parse(event.record), {
      subject: target.did,
      time: registry.clock.now(),
      reason: 'malware',
    });

    // What verify and mirrors check: the served profile against the agent's latest leaf, signed.
    const verifierKey = (await registry.app.inject({ method: 'GET', url: '/log/verifier-key' })).body.trim();
    const proof = (
      await registry.app.inject({ method: 'GET', url: `${agentPath(target.did)}/log-proof` })
    ).json<LogProof>();
    const { leaf } = verifyLogProof(proof, verifierKey, target.did);
    assert.equal(leaf.op, 'deactivate', 'followers that know no moderation kind drop the agent');
    const served = (await registry.app.inject({ method: 'GET', url: agentPath(target.did) })).json<object>();
    checkProfileAgainstLeaf(served, leaf, proof.leaf_index);

    const publicList = await registry.app.inject({ method: 'GET', url: '/api/moderation' });
    assert.equal(publicList.statusCode, 200);
    const listed = publicList.json<{ decisions: { target: string; action: string; reason: string }[] }>();
    assert.deepEqual(listed.decisions[0], {
      seq: decision.seq,
      target: target.did,
      action: 'suspended',
      reason: 'malware',
      note: 'Serves a binary',
      decided_at: registry.clock.now(),
    });
    assert.ok(!publicList.body.includes(reporter.did), 'the reporter is never public');

    const actioned = await registry.app.inject({
      method: 'GET',
      url: `/api/admin/reports?state=actioned`,
      headers: operator,
    });
    assert.equal(actioned.json<{ reports: unknown[] }>().reports.length, 1);

    const twice = await registry.app.inject({
      method: 'POST',
      url: `/api/admin/agents/${encodeURIComponent(target.did)}/suspend`,
      headers: operator,
      payload: { reason: 'spam' },
    });
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json<{ code: string }>().code, 'NOT_SUSPENDABLE');
  });

  test('the suspended agent appeals once, signed with its key, and the operator reads it', async () => {
    const decision = (
      await registry.app.inject({
        method: 'GET',
        url: `/api/moderation?target=${encodeURIComponent(target.did)}`,
      })
    ).json<{ decisions: { seq: number }[] }>().decisions[0]!.seq;
    const audience = registry.config.identity.publicUrl;
    const appeal = async (statement: string, signer = target.agent, timestamp = registry.clock.now()) => {
      const message = appealMessage({ did: target.did, audience, decision, statement, timestamp });
      return registry.app.inject({
        method: 'POST',
        url: `${agentPath(target.did)}/appeal`,
        payload: { decision, statement, audience, timestamp, signature: await signer.sign(message) },
      });
    };
    const forged = await appeal('It was not me', reporter.agent);
    assert.equal(forged.statusCode, 400);
    assert.equal(forged.json<{ code: string }>().code, 'INVALID_SIGNATURE');
    const made = await appeal('The binary was a model file, as documented');
    assert.equal(made.statusCode, 201, made.body);
    const twice = await appeal('Again', target.agent, registry.clock.now() + 1);
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json<{ code: string }>().code, 'APPEAL_EXISTS');
    const listed = await registry.app.inject({ method: 'GET', url: '/api/admin/appeals', headers: operator });
    assert.deepEqual(
      listed
        .json<{ appeals: { decision: number; did: string; statement: string }[] }>()
        .appeals.map((row) => [row.decision, row.did, row.statement]),
      [[decision, target.did, 'The binary was a model file, as documented']],
    );
  });

  test('a restoration brings everything back on both nodes', async () => {
    const restored = await registry.app.inject({
      method: 'POST',
      url: `/api/admin/agents/${encodeURIComponent(target.did)}/restore`,
      headers: operator,
      payload: { reason: 'resolved' },
    });
    assert.equal(restored.statusCode, 200, restored.body);
    for (const node of [registry, second]) {
      assert.ok((await searchDids(node, 'Mallard')).includes(target.did));
      assert.ok((await mcpSearchDids(node, 'Mallard')).includes(target.did));
      assert.deepEqual(await otherFaces(node, 'Moderated Mallard', target.did), { ard: true, web: true });
      const profile = await node.app.inject({ method: 'GET', url: agentPath(target.did) });
      const body = profile.json<{ status: string; moderation?: unknown }>();
      assert.equal(body.status, 'active');
      assert.equal(body.moderation, undefined);
    }
    const write = await registry.app.inject({
      method: 'PUT',
      url: agentPath(target.did),
      headers: bearer(target.token),
      payload: { description: 'back again' },
    });
    assert.equal(write.statusCode, 200, write.body);
    const again = await registry.app.inject({
      method: 'POST',
      url: `/api/admin/agents/${encodeURIComponent(target.did)}/restore`,
      headers: operator,
      payload: { reason: 'resolved' },
    });
    assert.equal(again.json<{ code: string }>().code, 'NOT_SUSPENDED');
  });

  test('the MCP report_agent tool reports as the agent of the token', async () => {
    const mcpReporter = await registerNamed(registry, 'Mcp Reporting Martin');
    const call = () =>
      registry.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...bearer(mcpReporter.token),
        },
        payload: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'report_agent', arguments: { target: target.did, reason: 'broken' } },
        },
      });
    const first = (await call()).json<{
      result: { isError?: boolean; structuredContent: { state: string } };
    }>();
    assert.equal(first.result.isError ?? false, false, JSON.stringify(first));
    assert.equal(first.result.structuredContent.state, 'open');
    const second = (await call()).json<{ result: { isError?: boolean } }>();
    assert.equal(second.result.isError, true);
  });

  test('a flood of reports from one agent is refused past REPORT_RATE_LIMIT', async () => {
    const flooder = await registerNamed(registry, 'Flooding Finch');
    const codes: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      const victim = await registerNamed(registry, `Flooded ${index}`);
      codes.push((await report(flooder.token, { target: victim.did, reason: 'spam' })).statusCode);
    }
    assert.deepEqual(codes, [201, 201, 201, 429, 429]);
    const refused = await report(flooder.token, { target: target.did, reason: 'spam' });
    assert.equal(refused.json<{ code: string }>().code, 'REPORT_RATE_LIMITED');
  });
});

describe('moderation: reports from one address', () => {
  let registry: TestRegistry;
  before(async () => {
    registry = await startRegistry({ REPORT_RATE_LIMIT_PER_ADDRESS: '2' });
  });
  after(async () => {
    await registry.close();
  });

  test('many agents reporting from one address are refused past REPORT_RATE_LIMIT_PER_ADDRESS', async () => {
    const target = await registerNamed(registry, 'Target of a Sybil Flood');
    const codes: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const sybil = await registerNamed(registry, `Sybil ${index}`);
      const answer = await registry.app.inject({
        method: 'POST',
        url: '/api/reports',
        headers: bearer(sybil.token),
        payload: { target: target.did, reason: 'spam' },
      });
      codes.push(answer.statusCode === 201 ? 'created' : answer.json<{ code: string }>().code);
    }
    assert.deepEqual(codes, ['created', 'created', 'REPORT_RATE_LIMITED']);
  });
});
