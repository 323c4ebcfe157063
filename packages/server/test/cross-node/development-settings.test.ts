import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  createTestDatabase,
  startRegistryProcess,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';

/** The JSON log lines a registry process wrote, as (level, message, setting). */
function warnings(node: RegistryProcess): { setting?: string; msg: string }[] {
  return node
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        const parsed = JSON.parse(line) as { level?: number; msg?: string; setting?: string };
        return parsed.level === 40 && parsed.msg !== undefined
          ? [{ setting: parsed.setting, msg: parsed.msg }]
          : [];
      } catch {
        return [];
      }
    });
}

describe('development-only settings at start', () => {
  let database: TestDatabase | undefined;
  const nodes: RegistryProcess[] = [];
  after(async () => {
    for (const node of nodes) await node.stop();
    await database?.drop();
  });

  test('each one that is on gets one warning line naming it; none when none is on', async () => {
    database = await createTestDatabase();
    const lax = await startRegistryProcess({
      DATABASE_URL: database.url,
      ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'yes',
      FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS: '1',
    });
    nodes.push(lax);
    const told = warnings(lax).filter(({ setting }) => setting !== undefined);
    assert.deepEqual(told.map(({ setting }) => setting).sort(), [
      'ALLOW_PRIVATE_NETWORKS',
      'FEDERATION_A2A_ALLOW_HTTP_TRUST_ROOTS',
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    ]);
    for (const { setting, msg } of told)
      assert.match(msg, new RegExp(`^${setting}=true is for local development only`));
    await lax.stop();
    nodes.pop();

    const strict = await startRegistryProcess({
      DATABASE_URL: database.url,
      ALLOW_PRIVATE_NETWORKS: 'false',
    });
    nodes.push(strict);
    assert.deepEqual(
      warnings(strict).filter(({ setting }) => setting !== undefined),
      [],
    );
  });
});
