import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { eventually } from '@agent-registry/testkit';
import {
  handlerModule,
  ok,
  parseJson,
  runCli,
  spawnCli,
  startRegistry,
  tempHome,
  type Json,
  type RunningRegistry,
} from './harness.js';

interface Availability {
  status: string;
  last_seen_at: number | null;
}

describe('availability in the CLI: search, show, whoami', () => {
  let registry: RunningRegistry;
  const agent = tempHome();
  const caller = tempHome();
  const run = (home: string, ...args: string[]) =>
    runCli(args, { home, env: { AGENT_REGISTRY_URL: registry.url } });
  let did = '';

  before(async () => {
    registry = await startRegistry();
    ok(await run(agent, 'init', '--name', 'Shouter', '--capability', 'uppercase:Upper-cases text'));
    did = String(parseJson<Json>(ok(await run(agent, 'register', '--json'))).did);
  });
  after(async () => {
    await registry.close();
    for (const home of [agent, caller]) fs.rmSync(home, { recursive: true, force: true });
  });

  it('an agent whose worker never ran is unknown: an AVAILABLE column, and a line in show and whoami', async () => {
    const table = ok(await run(caller, 'search', '--capability', 'uppercase')).stdout;
    assert.match(table, /REVIEWS +AVAILABLE +CAPABILITIES/);
    assert.match(table, /Shouter .* unknown +uppercase/);
    assert.match(ok(await run(caller, 'show', did)).stdout, /availability: +unknown \(never seen\)/);
    assert.match(ok(await run(agent, 'whoami')).stdout, /availability: +unknown \(never seen\)/);
    const whoami = parseJson<{ availability: Availability }>(ok(await run(agent, 'whoami', '--json')));
    assert.deepEqual(whoami.availability.status, 'unknown');
  });

  it('with its worker running, every face of the CLI reads online', async () => {
    const worker = spawnCli(['worker', handlerModule, '--json'], {
      home: agent,
      env: { AGENT_REGISTRY_URL: registry.url },
    });
    try {
      await eventually(() => worker.output().stdout.includes('"event":"ready"'), 'the worker to start');
      const hits = parseJson<{ agents: { did: string; availability: Availability }[] }>(
        ok(await run(caller, 'search', '--capability', 'uppercase', '--json')),
      );
      const hit = hits.agents.find((agent) => agent.did === did);
      assert.equal(hit?.availability.status, 'online');
      assert.equal(typeof hit?.availability.last_seen_at, 'number');
      assert.match(ok(await run(caller, 'search', '--capability', 'uppercase')).stdout, /Shouter .* online /);
      assert.match(ok(await run(caller, 'show', did)).stdout, /availability: +online \(seen \d+ s ago\)/);
      assert.match(ok(await run(agent, 'whoami')).stdout, /availability: +online \(seen \d+ s ago\)/);
    } finally {
      const stopped = await worker.stop();
      assert.equal(stopped.code, 0, stopped.stderr);
    }
  });
});
