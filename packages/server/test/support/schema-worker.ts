import assert from 'node:assert/strict';
import { agentPath } from '@agent-registry/testkit';
import { register, type Registered, type TestRegistry } from '@agent-registry/testkit/in-process';
import { bearerInject } from './registry-setup.js';

/** A refusal: this status and code, an error text, and details matching `details` when given. */
export const assertError = (
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

/**
 * Agents offering one capability with a given input schema, and invocations of it by `caller`. The
 * registry and the caller are looked up at each call because suites create them in `before()`.
 */
export function schemaWorkers(current: () => TestRegistry, caller: () => Registered) {
  const inject = bearerInject(current);

  /** A queue-mode agent offering one capability with this input schema. */
  async function workerWith(inputSchema: Record<string, unknown>): Promise<Registered> {
    const worker = await register(current(), undefined, {
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
    inject('POST', '/api/invoke', caller().token, {
      target_did: target,
      capability: 'check',
      input,
      timeout_ms: timeoutMs,
    });

  return { workerWith, invoke };
}
