import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '@agent-registry/testkit';
import { parseJson, runCli, spawnCli, startRegistry, tempHome, type RunningRegistry } from './harness.js';

/** The README's "Join the registry in two minutes", command for command. */
describe('join the registry in two minutes', () => {
  let registry: RunningRegistry;
  const work = tempHome();
  const serving = path.join(work, 'serving');
  const calling = path.join(work, 'calling');

  before(async () => {
    registry = await startRegistry();
  });
  after(async () => {
    await registry.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('init, register, worker with a handler module, invoked by another agent', async () => {
    // `--registry` on init saves it, so later commands need neither the flag nor the variable.
    const init = await runCli(
      ['--registry', registry.url, 'init', '--name', 'Shouter', '--capability', 'uppercase:Upper-cases text'],
      { home: serving, cwd: work },
    );
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /Next: .*agent-registry register/);
    const register = await runCli(['register'], { home: serving, cwd: work });
    assert.equal(register.code, 0, register.stderr);
    const did = /registered: +(\S+)/.exec(register.stdout)?.[1];
    assert.ok(did, register.stdout);

    fs.writeFileSync(
      path.join(work, 'handler.mjs'),
      'export default { uppercase: async (input) => ({ text: String(input.text).toUpperCase() }) };\n',
    );
    const worker = spawnCli(['worker', './handler.mjs'], { home: serving, cwd: work });
    try {
      await eventually(() => worker.output().stderr.includes('serving uppercase'), 'the worker to start');
      assert.match(worker.output().stderr, /invocation set to queue mode \(was disabled\)/);

      // The README's second terminal names the registry itself: a new config directory knows none.
      const readme = fs.readFileSync(path.join(import.meta.dirname, '../../../README.md'), 'utf8');
      const callerBlock = readme
        .split('```sh\n')
        .find((block) => block.startsWith('export AGENT_REGISTRY_HOME=~/.config/agent-registry-caller'));
      assert.match(callerBlock ?? '', /^export AGENT_REGISTRY_URL=http:\/\/localhost:8080 /m);
      const callerEnv = { AGENT_REGISTRY_URL: registry.url };
      for (const args of [['init', '--name', 'Caller'], ['register']]) {
        const result = await runCli(args, { home: calling, cwd: work, env: callerEnv });
        assert.equal(result.code, 0, result.stderr);
      }
      const search = await runCli(['search', '--capability', 'uppercase'], {
        home: calling,
        cwd: work,
        env: callerEnv,
      });
      assert.ok(search.stdout.includes(did), search.stdout);
      const invoke = await runCli(['invoke', did, 'uppercase', '--input', '{"text": "hello"}'], {
        home: calling,
        cwd: work,
        env: callerEnv,
      });
      assert.equal(invoke.code, 0, invoke.stderr);
      assert.deepEqual(JSON.parse(invoke.stdout), { text: 'HELLO' });
      const taskId = /task (\S+) completed/.exec(invoke.stderr)?.[1];
      assert.ok(taskId, invoke.stderr);
      const review = await runCli(['review', did, '--rating', '9', '--task', taskId, '--json'], {
        home: calling,
        cwd: work,
        env: callerEnv,
      });
      assert.equal(parseJson<{ verified: boolean }>(review).verified, true);
      await eventually(() => worker.output().stderr.includes('✓ task'), 'the worker to log the task');

      // The registry restarts: the worker notices, reconnects with backoff and serves again.
      await registry.stop();
      await eventually(() => worker.output().stderr.includes('registry unreachable'), 'the worker to notice');
      await registry.start();
      const again = await runCli(['invoke', did, 'uppercase', '--input', '{"text": "still here"}'], {
        home: calling,
        cwd: work,
        env: callerEnv,
      });
      assert.equal(again.code, 0, `${again.stderr}\n${worker.output().stderr}`);
      assert.deepEqual(JSON.parse(again.stdout), { text: 'STILL HERE' });
      assert.match(worker.output().stderr, /reconnected to the registry/);
    } finally {
      const stopped = await worker.stop();
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stderr, /SIGTERM: finishing in-flight tasks/);
    }
  });
});
