import type { Row } from '../measure.js';
import { echoInvocation, jsonAs, measureRegistry, type ActorContext } from './context.js';

/** Webhook invocation round trip: the registry signs and delivers to webhook-server.ts, which answers at once. */
export async function webhookScenario(context: ActorContext): Promise<Row[]> {
  if (!context.wanted('webhook')) return [];
  const { invoker, hookAgent } = context.actors;
  return [
    await measureRegistry(context, {
      name: 'webhook',
      label: 'webhook invocation round trip',
      connections: context.options.connections,
      load: {
        method: 'POST',
        headers: jsonAs(invoker),
        body: JSON.stringify(echoInvocation(hookAgent)),
        requests: [{ method: 'POST', path: '/api/invoke' }],
      },
    }),
  ];
}
