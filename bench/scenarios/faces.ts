import type autocannon from 'autocannon';
import type { Row } from '../measure.js';
import { log } from '../processes.js';
import {
  echoInvocation,
  jsonAs,
  measureRegistry,
  medianAndP99,
  responseNotes,
  type ActorContext,
} from './context.js';

type Face = 'rest' | 'mcp' | 'mcp2026' | 'a2a';

/**
 * The protocol faces: one invocation of the webhook agent as POST /api/invoke, as the MCP tool
 * invoke_agent (stateless POST /mcp, tools/call, in protocol 2025-11-25 and again in the stateless
 * 2026-07-28 revision, which the v2 SDK serves) and as A2A SendMessage, taking turns on one
 * connection in one run, so load from elsewhere on the machine hits all three alike. Each sample
 * is filed under the face that answered it; the difference of the p50s is the face's overhead.
 */
export async function facesScenario(context: ActorContext): Promise<Row[]> {
  if (!context.wanted('faces')) return [];
  const { invoker, hookAgent } = context.actors;
  const input = echoInvocation(hookAgent);
  const auth = jsonAs(invoker);
  const samples: Record<Face, number[]> = { rest: [], mcp: [], mcp2026: [], a2a: [] };
  const answeredBy = responseNotes<Face>((ms, face) => samples[face].push(ms));
  let wrongAnswers = 0;
  const expect = (face: Face, marker: string) => (status: number, body: string) => {
    answeredBy.note(face);
    if (status !== 200 || !body.includes(marker)) wrongAnswers++;
  };
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/api/invoke',
      headers: auth,
      body: JSON.stringify(input),
      onResponse: expect('rest', '"status":"completed"'),
    },
    {
      method: 'POST',
      path: '/mcp',
      headers: {
        ...auth,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'invoke_agent', arguments: input },
      }),
      onResponse: expect('mcp', '"structuredContent"'),
    },
    {
      method: 'POST',
      path: '/mcp',
      headers: {
        ...auth,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'invoke_agent',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'invoke_agent',
          arguments: input,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      onResponse: expect('mcp2026', '"structuredContent"'),
    },
    {
      method: 'POST',
      path: `/a2a/${encodeURIComponent(hookAgent.did)}/`,
      headers: { ...auth, 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: 'bench', role: 'ROLE_USER', parts: [{ data: { n: 1 } }] },
          metadata: { capability: 'echo', timeout_ms: 10_000 },
        },
      }),
      onResponse: expect('a2a', 'TASK_STATE_COMPLETED'),
    },
  ];
  const row = await measureRegistry(context, {
    name: 'faces-1',
    label: 'invoke webhook agent: REST, MCP invoke_agent (2025-11-25, 2026-07-28), A2A SendMessage in turn',
    connections: 1,
    load: { requests, onLatency: answeredBy.onLatency },
    note: 'req/s and CPU are for the four kinds together',
    beforeMeasure: () => {
      for (const list of Object.values(samples)) list.length = 0;
      wrongAnswers = 0;
    },
  });
  if (wrongAnswers > 0) throw new Error(`${wrongAnswers} face invocations did not complete`);
  const extra: Record<string, number> = {};
  for (const [face, list] of Object.entries(samples)) {
    const { p50, p99 } = medianAndP99(list);
    extra[`${face}P50`] = p50;
    extra[`${face}P99`] = p99;
    extra[`${face}Count`] = list.length;
  }
  row.extra = extra;
  log(
    `  p50 ms: REST ${extra.restP50?.toFixed(2)}, MCP ${extra.mcpP50?.toFixed(2)}, ` +
      `MCP 2026-07-28 ${extra.mcp2026P50?.toFixed(2)}, A2A ${extra.a2aP50?.toFixed(2)}`,
  );
  return [row];
}
