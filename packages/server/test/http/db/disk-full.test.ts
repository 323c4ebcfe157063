import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  agentPath,
  defaultProfile,
  ed25519Agent,
  registrationBody,
  testDatabase,
} from '@agent-registry/testkit';
import { startRegistry, type TestRegistry } from '@agent-registry/testkit/in-process';

/**
 * A full disk must answer what every other lost database answers: 503 DATABASE_UNAVAILABLE with
 * Retry-After, not 500. SQLite's `max_page_count` makes the file unable to grow, which fails writes
 * with the same SQLITE_FULL ("database or disk is full") a full filesystem gives, without root or a
 * mounted filesystem; like a real full disk, SQLite then rolls the open transaction back itself.
 */
describe(
  'SQLite full disk',
  { skip: testDatabase !== 'sqlite' ? 'SQLite-only: runs in the SQLite pass' : undefined },
  () => {
    let registry: TestRegistry;

    before(async () => {
      registry = await startRegistry();
    });

    after(() => registry?.close());

    const pragma = async (text: string): Promise<Record<string, unknown>[]> =>
      (await sql.raw(`pragma ${text}`).execute(registry.ctx.database.db)).rows as Record<string, unknown>[];

    const registerOnce = async () => {
      const agent = ed25519Agent();
      const response = await registry.app.inject({
        method: 'POST',
        url: '/api/agents/register',
        payload: await registrationBody(agent, defaultProfile(), registry.clock.now()),
      });
      return response;
    };

    test('writes answer 503 DATABASE_UNAVAILABLE with Retry-After, alone or grouped, then succeed once there is room', async () => {
      const [{ page_count: pages }] = (await pragma('page_count')) as [{ page_count: number }];
      await pragma(`max_page_count = ${pages}`);

      // The free pages inside the file fill first; a bounded number of registrations reaches the limit.
      const registered: string[] = [];
      let refused: Awaited<ReturnType<typeof registerOnce>> | undefined;
      for (let attempt = 0; attempt < 2_000 && refused === undefined; attempt += 1) {
        const response = await registerOnce();
        if (response.statusCode === 201) registered.push((response.json() as { did: string }).did);
        else refused = response;
      }
      assert.ok(refused !== undefined, 'the file reached its page limit');
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().code, 'DATABASE_UNAVAILABLE');
      assert.equal(refused.headers['retry-after'], '1');

      // Concurrent writes share one transaction (group commit): every one of them is refused the same way.
      const burst = await Promise.all(Array.from({ length: 12 }, () => registerOnce()));
      assert.deepEqual(
        burst.map((response) => [response.statusCode, response.json().code, response.headers['retry-after']]),
        burst.map(() => [503, 'DATABASE_UNAVAILABLE', '1']),
      );

      // Reads still work, and the node recovers by itself once the file may grow again.
      const earlier = registered.at(-1) as string;
      assert.equal((await registry.app.inject({ method: 'GET', url: agentPath(earlier) })).statusCode, 200);
      await pragma(`max_page_count = ${2 ** 30}`);
      const later = await registerOnce();
      assert.equal(later.statusCode, 201, later.body);
    });
  },
);
