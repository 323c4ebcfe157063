import assert from 'node:assert/strict';
import { agentPath, bearer } from '@agent-registry/testkit';
import {
  register,
  startRegistry,
  type Registered,
  type TestRegistry,
} from '@agent-registry/testkit/in-process';

/** The setup most HTTP suites start from: a registry in this process, with one agent registered on it. */
export async function startWithAgent(
  env: Record<string, string> = {},
): Promise<{ registry: TestRegistry; agent: Registered }> {
  const registry = await startRegistry(env);
  return { registry, agent: await register(registry) };
}

export type InjectMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * `inject(method, url, token?, payload?)`: the token goes as a bearer, the payload as the JSON body, each
 * only when given. The registry is looked up at each call because suites start it in `before()`, after
 * their helpers are defined.
 */
export function bearerInject(current: () => TestRegistry) {
  return (method: InjectMethod, url: string, token?: string, payload?: unknown) =>
    current().app.inject({
      method,
      url,
      headers: token ? bearer(token) : {},
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
}

/** Turns on queue delivery for `agent`, as its owner does, and checks the registry took it. */
export async function enableQueue(registry: TestRegistry, agent: Registered): Promise<void> {
  const config = await registry.app.inject({
    method: 'PUT',
    url: agentPath(agent.did, '/invocation'),
    headers: bearer(agent.token),
    payload: { enabled: true, delivery_mode: 'queue' },
  });
  assert.equal(config.statusCode, 200, config.body);
}
