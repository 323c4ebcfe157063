import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
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
  type ErrorOutput,
  type Json,
  type RunningRegistry,
} from './harness.js';

/** What a new user trips on, each from the CLI as a subprocess against a real registry. */
describe('the CLI for a new user (SQLite registry)', () => {
  let registry: RunningRegistry;
  const serving = tempHome(); // registers with --registry only: no variable, no saved default
  const calling = tempHome();
  let servingDid = '';
  let callingDid = '';
  const call = (...args: string[]) =>
    runCli(args, { home: calling, env: { AGENT_REGISTRY_URL: registry.url } });

  before(async () => {
    registry = await startRegistry();
  });
  after(async () => {
    await registry.close();
    for (const home of [serving, calling]) fs.rmSync(home, { recursive: true, force: true });
  });

  it('register --registry X makes X the default: the next commands talk to X without the flag', async () => {
    ok(
      await runCli(['init', '--name', 'Shouter', '--capability', 'uppercase', '--capability', 'explode'], {
        home: serving,
      }),
    );
    const register = ok(await runCli(['register', '--registry', registry.url], { home: serving }));
    servingDid = /registered: +(\S+)/.exec(register.stdout)?.[1] ?? '';
    assert.ok(servingDid, register.stdout);
    assert.match(register.stderr, new RegExp(`${registry.url} is now the default registry`));
    assert.equal(
      ok(await runCli(['config', 'get', 'registry'], { home: serving })).stdout.trim(),
      registry.url,
    );
    const whoami = parseJson<Json>(ok(await runCli(['whoami', '--json'], { home: serving })));
    assert.equal(whoami.did, servingDid);
    assert.equal(whoami.registry, registry.url);
  });

  it('an agent registered elsewhere is told where, and how to use it', async () => {
    const elsewhere = 'http://127.0.0.1:9';
    const whoami = await runCli(['whoami', '--registry', elsewhere], { home: serving });
    assert.equal(whoami.code, 4);
    assert.match(
      whoami.stderr,
      new RegExp(
        `this agent is registered at ${registry.url}, not at ${elsewhere} \\(from the --registry option\\): ` +
          `add \`--registry ${registry.url}\` or make it the default with \`agent-registry config set registry ${registry.url}\``,
      ),
    );
    const json = parseJson<ErrorOutput>(
      await runCli(['tasks', '--json'], { home: serving, env: { AGENT_REGISTRY_URL: elsewhere } }),
    );
    assert.equal(json.error.code, 'NOT_REGISTERED');
    assert.match(json.error.message, /from AGENT_REGISTRY_URL/);
  });

  it('token prints a fresh token alone on stdout (and as JSON), usable as a bearer token', async () => {
    const printed = ok(await runCli(['token'], { home: serving }));
    const token = printed.stdout.trim();
    assert.match(token, /^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(printed.stdout, `${token}\n`);
    assert.match(
      printed.stderr,
      new RegExp(`token for ${servingDid.replace(/[.%]/g, '\\$&')}, expires \\d{4}-`),
    );
    const answer = await fetch(`${registry.url}/api/reviews/my`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(answer.status, 200);

    const json = parseJson<Json>(ok(await runCli(['token', '--json'], { home: serving })));
    assert.equal(json.did, servingDid);
    assert.equal(json.registry, registry.url);
    assert.match(String(json.token), /^ey/);
    assert.equal(typeof json.expires_at, 'number');
    // The saved session is the new token: whoami reports its expiry.
    const whoami = parseJson<Json>(ok(await runCli(['whoami', '--json'], { home: serving })));
    assert.equal(whoami.token_expires_at, json.expires_at);

    const help = ok(await runCli(['whoami', '--help'], { home: serving }));
    assert.match(help.stdout, /`agent-registry token` prints the token/);
    assert.doesNotMatch(help.stdout, /DID, key and token,/);
  });

  it('plain init is a caller: it publishes "caller", nothing to invoke, and worker refuses to serve it', async () => {
    const init = ok(await call('init', '--name', 'Caller'));
    assert.match(init.stdout, /capabilities: none to serve \(the profile lists "caller"\)/);
    const profile = JSON.parse(fs.readFileSync(path.join(calling, 'profile.json'), 'utf8')) as {
      capabilities: { type: string }[];
    };
    assert.deepEqual(
      profile.capabilities.map((capability) => capability.type),
      ['caller'],
    );
    const registered = ok(await call('register'));
    assert.match(registered.stdout, /Next: find agents with `agent-registry search`/);
    assert.doesNotMatch(registered.stdout, /serve your capabilities/);
    callingDid = String(parseJson<Json>(ok(await call('whoami', '--json'))).did);
    const search = parseJson<{ agents: Json[] }>(ok(await call('search', '--capability', 'echo', '--json')));
    assert.deepEqual(search.agents, [], 'no agent offers an echo nobody serves');

    const worker = await call('worker', handlerModule);
    assert.equal(worker.code, 2);
    assert.match(worker.stderr, /only calls other agents: its profile declares no capability to serve/);
    const whoami = parseJson<Json>(ok(await call('whoami', '--json')));
    assert.equal(whoami.invocation_enabled, false, 'invocation stays disabled');
  });

  it('the worker warns about a published capability its module has no handler for', async () => {
    const onlyUppercase = path.join(serving, 'only-uppercase.mjs');
    fs.writeFileSync(onlyUppercase, 'export default { uppercase: async () => ({ text: "X" }) };\n');
    const worker = spawnCli(['worker', onlyUppercase], { home: serving });
    try {
      await eventually(() => worker.output().stderr.includes('serving uppercase'), 'the worker to start');
    } finally {
      await worker.stop();
    }
    assert.match(
      worker.output().stderr,
      /warning: published capabilities with no handler in .*only-uppercase\.mjs \(their calls will fail with "no handler"\): explode/,
    );
    // A module that serves every published capability gets no such warning.
    const full = spawnCli(['worker', handlerModule], { home: serving });
    try {
      await eventually(
        () => full.output().stderr.includes('serving uppercase, explode'),
        'the worker to start',
      );
    } finally {
      await full.stop();
    }
    assert.doesNotMatch(full.output().stderr, /no handler/);
  });

  it('a timed-out invoke names the task and the command that reads it later', async () => {
    // The serving agent is in queue mode (the worker set it) and nobody serves it now. Its worker
    // stopped cleanly, which reads offline at once; one poll since makes it online, so the call is sent.
    const poll = await runCli(['api', 'GET', '/api/agent/tasks?wait=0&limit=1'], { home: serving });
    assert.equal(poll.code, 0, poll.stderr);
    const timedOut = await call(
      'invoke',
      servingDid,
      'uppercase',
      '--input',
      '{"text":"x"}',
      '--timeout',
      '200',
    );
    assert.equal(timedOut.code, 1);
    const taskId = /task: (\S+)/.exec(timedOut.stderr)?.[1];
    assert.ok(taskId, timedOut.stderr);
    assert.match(
      timedOut.stderr,
      new RegExp(
        `hint: the agent may still answer: \`agent-registry tasks get ${taskId}\` shows the task's status`,
      ),
    );
    const json = parseJson<ErrorOutput>(
      await call('invoke', servingDid, 'uppercase', '--input', '{}', '--timeout', '200', '--json'),
    );
    assert.equal(json.error.code, 'INVOCATION_TIMEOUT');
    assert.match(json.error.hint ?? '', new RegExp(`agent-registry tasks get ${json.error.task_id}`));
    const task = parseJson<Json>(ok(await call('tasks', 'get', taskId, '--json')));
    assert.equal(task.status, 'timeout');
  });

  it('a repeated review or registration names the CLI command to use, not an HTTP route', async () => {
    ok(await call('review', servingDid, '--rating', '3.5', '--comment', 'slow'));
    const again = await call('review', servingDid, '--rating', '4');
    assert.equal(again.code, 1);
    assert.match(
      again.stderr,
      new RegExp(
        `you have already reviewed ${servingDid.replace(/[.%]/g, '\\$&')}: change that review with \`agent-registry review ${servingDid.replace(/[.%]/g, '\\$&')} --rating 4 --edit\``,
      ),
    );
    assert.doesNotMatch(again.stderr, /\/api\//);
    const againJson = parseJson<ErrorOutput>(await call('review', servingDid, '--rating', '4', '--json'));
    assert.deepEqual([againJson.error.code, againJson.error.status], ['REVIEW_EXISTS', 409]);
    ok(await call('review', servingDid, '--rating', '4', '--edit'));

    const twice = await call('register');
    assert.equal(twice.code, 1);
    assert.match(
      twice.stderr,
      /this key is already registered at .*: get a token for it with `agent-registry login`/,
    );
    assert.doesNotMatch(twice.stderr, /\/api\//);
    const twiceFlag = await runCli(['register', '--registry', registry.url], { home: calling });
    assert.match(twiceFlag.stderr, new RegExp(`\`agent-registry login --registry ${registry.url}\``));
  });

  it('a reviewed agent at the neutral score says why: its reviewers carry no weight yet', async () => {
    // The one review above comes from an account made minutes ago: it weighs nothing.
    const reputation = ok(await call('reputation', servingDid));
    assert.match(reputation.stdout, /reputation: +50\n/);
    assert.match(
      reputation.stdout,
      /why: +50 is the neutral score: its review comes from reviewers that carry no weight yet \(an account made today weighs nothing and gains its weight over 30 days\), so the average rating of 4 does not move it yet/,
    );
    const json = parseJson<Json>(ok(await call('reputation', servingDid, '--json')));
    assert.match(String(json.why), /neutral score/);
    const shown = ok(await call('show', servingDid));
    assert.match(shown.stdout, /why: +50 is the neutral score/);
    assert.match(shown.stdout, /reputation: +50 \(average 4, 1 review\)\n/);
    // No reviews: nothing to explain.
    const unreviewed = ok(await call('reputation', callingDid));
    assert.doesNotMatch(unreviewed.stdout, /why:/);
    // Unrated until a first review, on every human face; --json keeps the API's number.
    assert.match(unreviewed.stdout, /reputation: +unrated\n/);
    assert.match(ok(await call('show', callingDid)).stdout, /reputation: +unrated \(no reviews yet\)\n/);
    assert.equal(parseJson<Json>(ok(await call('reputation', callingDid, '--json'))).reputation_score, 0);
    const table = ok(await call('search', 'Caller')).stdout;
    const row = table.split('\n').find((line) => line.startsWith(callingDid));
    assert.match(row ?? table, /\sunrated\s/);
  });
});
