import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  ok,
  parseJson,
  runCli,
  startRegistry,
  tempHome,
  type ErrorOutput,
  type Json,
  type RunningRegistry,
} from './harness.js';

const ADMIN_TOKEN = 'cli-moderation-operator-0123456';

describe('agent-registry report and admin reports|suspend|restore against a real registry (SQLite)', () => {
  let registry: RunningRegistry;
  const reporter = tempHome();
  const reported = tempHome();
  const run = (home: string, ...args: string[]) =>
    runCli(args, { home, env: { AGENT_REGISTRY_URL: registry.url } });
  const admin = (...args: string[]) =>
    runCli(['admin', ...args, '--json'], {
      home: reporter,
      env: { AGENT_REGISTRY_URL: registry.url, FEDERATION_ADMIN_TOKEN: ADMIN_TOKEN },
    });

  before(async () => {
    registry = await startRegistry({ FEDERATION_ADMIN_TOKEN: ADMIN_TOKEN });
  });
  after(async () => {
    await registry.close();
    for (const home of [reporter, reported]) fs.rmSync(home, { recursive: true, force: true });
  });

  it('an agent reports, the operator lists, suspends and restores', async () => {
    for (const [home, name] of [
      [reporter, 'Cli Reporter'],
      [reported, 'Cli Reported'],
    ] as const) {
      ok(await run(home, 'init', '--name', name, '--capability', 'general'));
      ok(await run(home, 'register'));
    }
    const did = String(parseJson<Json>(ok(await run(reported, 'whoami', '--json'))).did);

    const receipt = parseJson<Json>(ok(await run(reporter, 'report', did, '--reason', 'spam', '--json')));
    assert.equal(receipt.state, 'open');
    const again = await run(reporter, 'report', did, '--reason', 'spam', '--json');
    assert.equal(again.code, 1);
    assert.equal(parseJson<ErrorOutput>(again).error.code, 'REPORT_EXISTS');

    const listed = parseJson<{ reports: { id: string }[] }>(ok(await admin('reports', '--target', did)));
    assert.deepEqual(
      listed.reports.map((report) => report.id),
      [receipt.id],
    );
    const suspended = parseJson<Json>(ok(await admin('suspend', did, '--reason', 'spam', '--note', 'ads')));
    assert.equal(suspended.action, 'suspended');
    const reporterDid = String(parseJson<Json>(ok(await run(reporter, 'whoami', '--json'))).did);
    const refused = await run(reported, 'report', reporterDid, '--reason', 'other', '--json');
    assert.notEqual(refused.code, 0);
    assert.equal(parseJson<ErrorOutput>(refused).error.code, 'AGENT_SUSPENDED');
    // Suspended, its token is refused: it appeals with its key, once for this decision.
    const appealed = parseJson<Json>(ok(await run(reported, 'appeal', 'Those were not ads', '--json')));
    assert.equal(appealed.decision, suspended.seq);
    const twice = await run(reported, 'appeal', 'Again', '--json');
    assert.notEqual(twice.code, 0);
    assert.equal(parseJson<ErrorOutput>(twice).error.code, 'APPEAL_EXISTS');
    const appeals = parseJson<{ appeals: { decision: number }[] }>(
      ok(
        await runCli(['admin', 'appeals', '--json'], {
          home: reporter,
          env: { AGENT_REGISTRY_URL: registry.url, FEDERATION_ADMIN_TOKEN: ADMIN_TOKEN },
        }),
      ),
    );
    assert.ok(appeals.appeals.some((appeal) => appeal.decision === suspended.seq));
    const restored = parseJson<Json>(ok(await admin('restore', did, '--reason', 'resolved')));
    assert.equal(restored.action, 'restored');

    const wrongToken = await runCli(
      ['admin', 'reports', '--admin-token', 'not-the-operator-token', '--json'],
      {
        home: reporter,
        env: { AGENT_REGISTRY_URL: registry.url },
      },
    );
    assert.equal(wrongToken.code, 4);
    const noToken = await runCli(['admin', 'reports', '--json'], {
      home: reporter,
      env: { AGENT_REGISTRY_URL: registry.url, FEDERATION_ADMIN_TOKEN: undefined },
    });
    assert.equal(noToken.code, 2);
  });
});
