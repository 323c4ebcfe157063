import { call, expectStatus, registerActor, type Actor } from '../client.js';
import { spawnNode, tsx, waitForMessage } from '../processes.js';
import type { Actors, ScenarioContext } from './context.js';

/**
 * The clients of the invocation scenarios, registered over HTTP like any client: an invoker, a queue
 * agent and a webhook agent (its server, webhook-server.ts, started here), and one completed
 * invocation, whose task the authenticated GET reads.
 */
export async function registerActors(context: ScenarioContext): Promise<Actors> {
  const { base } = context;
  const echo = {
    type: 'echo',
    description: 'Answers with its input',
    input_schema: { type: 'object', properties: { n: { type: 'number' } } },
  };
  const invoker = await registerActor(base, 'Bench invoker', [{ type: 'general' }]);
  const queueAgent = await registerActor(base, 'Bench queue agent', [echo]);
  const hookAgent = await registerActor(base, 'Bench webhook agent', [echo]);
  await enableInvocation(base, 'queue mode', queueAgent, { delivery_mode: 'queue' });
  const hook = spawnNode(
    tsx('webhook-server.ts').concat([String(context.ports.hook)]),
    {},
    context.processLog,
    true,
  );
  context.children.push(hook);
  await waitForMessage(hook, 'ready');
  await enableInvocation(base, 'webhook mode', hookAgent, {
    delivery_mode: 'webhook',
    webhook_url: `http://127.0.0.1:${context.ports.hook}/hook`,
  });
  const firstTask = await expectStatus(
    'first invocation',
    call(
      base,
      'POST',
      '/api/invoke',
      { target_did: hookAgent.did, capability: 'echo', input: { n: 1 } },
      invoker.token,
    ),
    200,
  );
  return { invoker, queueAgent, hookAgent, taskId: firstTask.task_id as string };
}

async function enableInvocation(
  base: string,
  label: string,
  agent: Actor,
  delivery: { delivery_mode: 'queue' } | { delivery_mode: 'webhook'; webhook_url: string },
): Promise<void> {
  await expectStatus(
    label,
    call(
      base,
      'PUT',
      `/api/agents/${encodeURIComponent(agent.did)}/invocation`,
      { enabled: true, ...delivery },
      agent.token,
    ),
    200,
  );
}
