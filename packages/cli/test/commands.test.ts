import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SEARCH_LIMITS } from '@agent-registry/protocol';
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

describe('every command against a real registry (SQLite)', () => {
  let registry: RunningRegistry;
  const agent = tempHome(); // the agent that serves
  const caller = tempHome(); // the agent that calls
  const run = (home: string, ...args: string[]) =>
    runCli(args, { home, env: { AGENT_REGISTRY_URL: registry.url } });
  let agentDid = '';
  let taskId = '';

  before(async () => {
    registry = await startRegistry();
  });
  after(async () => {
    await registry.close();
    for (const home of [agent, caller]) fs.rmSync(home, { recursive: true, force: true });
  });

  it('init writes a key and a profile with mode 0600 and refuses to overwrite them', async () => {
    const json = parseJson<Json>(
      ok(
        await run(
          agent,
          'init',
          '--name',
          'Shouter',
          '--capability',
          'uppercase:Upper-cases text',
          '--capability',
          'explode',
          '--tags',
          'text, demo',
          '--json',
        ),
      ),
    );
    assert.equal(json.key_type, 'ed25519');
    assert.match(String(json.public_key), /^[0-9a-f]{64}$/);
    assert.equal(json.did, null);
    assert.equal(json.profile_written, true);
    assert.equal(json.key_written, true);
    for (const file of ['key.json', 'profile.json']) {
      assert.equal(fs.statSync(path.join(agent, file)).mode & 0o777, 0o600, file);
    }
    const keyFile = fs.readFileSync(path.join(agent, 'key.json'), 'utf8');
    assert.match(keyFile, /"private_key"/);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(agent, 'profile.json'), 'utf8')), {
      name: 'Shouter',
      description: 'Shouter, an agent on the Agent Registry',
      capabilities: [{ type: 'uppercase', description: 'Upper-cases text' }, { type: 'explode' }],
      tags: ['text', 'demo'],
    });

    const again = await run(agent, 'init', '--json');
    assert.equal(again.code, 2);
    assert.equal(parseJson<ErrorOutput>(again).error.code, 'ALREADY_INITIALISED');
    const generate = await run(agent, 'keys', 'generate');
    assert.equal(generate.code, 2);
    assert.match(generate.stderr, /a key already exists .* Use --force/);
    assert.equal(fs.readFileSync(path.join(agent, 'key.json'), 'utf8'), keyFile);
  });

  it('commands that act as the agent exit 4 before it registers', async () => {
    const whoami = await run(agent, 'whoami', '--json');
    assert.equal(whoami.code, 4);
    assert.equal(parseJson<ErrorOutput>(whoami).error.code, 'NOT_REGISTERED');
    const noKey = await run(caller, 'login');
    assert.equal(noKey.code, 4);
    assert.match(noKey.stderr, /no key at .*agent-registry init/);
  });

  it('register signs and saves the DID and token; a second registration is refused (exit 1)', async () => {
    const json = parseJson<Json>(ok(await run(agent, 'register', '--json')));
    const port = new URL(registry.url).port;
    assert.match(String(json.did), new RegExp(`^did:web:127\\.0\\.0\\.1%3A${port}:agent:[0-9a-f]{32}$`));
    assert.equal(json.registry, registry.url);
    assert.equal(typeof json.expires_at, 'number');
    agentDid = String(json.did);
    const config = JSON.parse(fs.readFileSync(path.join(agent, 'config.json'), 'utf8')) as {
      sessions: Record<string, { did: string; token: string }>;
    };
    assert.equal(config.sessions[registry.url]?.did, agentDid);
    assert.match(config.sessions[registry.url]?.token ?? '', /^ey/);
    assert.equal(fs.statSync(path.join(agent, 'config.json')).mode & 0o777, 0o600);

    const twice = await run(agent, 'register', '--json');
    assert.equal(twice.code, 1);
    const error = parseJson<ErrorOutput>(twice).error;
    assert.equal(error.code, 'PUBLIC_KEY_EXISTS');
    assert.equal(error.status, 409);
  });

  it('whoami, keys and show describe the agent', async () => {
    const whoami = parseJson<Json>(ok(await run(agent, 'whoami', '--json')));
    assert.equal(whoami.did, agentDid);
    assert.equal(whoami.status, 'active');
    assert.equal(whoami.name, 'Shouter');
    const human = ok(await run(agent, 'whoami'));
    assert.match(human.stdout, new RegExp(`did: +${agentDid.replace(/[.%]/g, '\\$&')}`));

    const keys = parseJson<Json>(ok(await run(agent, 'keys', '--json')));
    assert.equal(keys.did, agentDid);
    assert.equal(keys.mode, '0600');
    assert.equal(keys.private_key, undefined);
    assert.doesNotMatch(ok(await run(agent, 'keys')).stdout, /private/i);

    const shown = parseJson<Json>(ok(await run(caller, 'show', agentDid, '--json')));
    assert.equal(shown.did, agentDid);
    assert.equal(shown.name, 'Shouter');
    const table = ok(await run(caller, 'show', agentDid));
    assert.match(table.stdout, /CAPABILITY +DESCRIPTION/);
    assert.match(table.stdout, /uppercase +Upper-cases text/);

    const unknown = await run(
      caller,
      'show',
      'did:web:127.0.0.1:agent:00000000000000000000000000000000',
      '--json',
    );
    assert.equal(unknown.code, 1);
    assert.equal(parseJson<ErrorOutput>(unknown).error.status, 404);
  });

  it('update publishes the profile file, refuses a bad one locally, and sets the delivery mode', async () => {
    const profilePath = path.join(agent, 'profile.json');
    const profile = JSON.parse(fs.readFileSync(profilePath, 'utf8')) as Json;
    fs.writeFileSync(profilePath, JSON.stringify({ ...profile, description: 'Shouts your text back' }));
    const updated = parseJson<{ profile: Json }>(ok(await run(agent, 'update', '--json')));
    assert.equal(updated.profile.description, 'Shouts your text back');

    const bad = path.join(agent, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ name: '', capabilities: [] }));
    const refused = await run(agent, 'update', '--profile', bad, '--json');
    assert.equal(refused.code, 1);
    const error = parseJson<{ error: { code: string; problems: { path: string }[] } }>(refused).error;
    assert.equal(error.code, 'INVALID_PROFILE');
    assert.deepEqual(
      error.problems.map((problem) => problem.path),
      ['$.name', '$.capabilities'],
    );

    const queue = parseJson<{ invocation: Json; profile?: Json }>(
      ok(await run(agent, 'update', '--delivery', 'queue', '--json')),
    );
    assert.equal(queue.profile, undefined);
    assert.equal(queue.invocation.enabled, true);
    assert.equal(queue.invocation.delivery_mode, 'queue');

    const wrongMix = await run(agent, 'update', '--webhook-url', 'https://x.example');
    assert.equal(wrongMix.code, 2);
  });

  it('a second agent registers and finds the first with search filters', async () => {
    ok(await run(caller, 'init', '--name', 'Caller', '--capability', 'orchestration'));
    ok(await run(caller, 'register'));
    const byCapability = parseJson<{ agents: Json[]; total: number }>(
      ok(await run(caller, 'search', '--capability', 'uppercase', '--tags', 'demo,other', '--json')),
    );
    assert.deepEqual(
      byCapability.agents.map((found) => found.did),
      [agentDid],
    );
    assert.equal(byCapability.total, 1);
    const byWords = ok(await run(caller, 'search', 'shouts', 'text', '--sort', 'reputation', '--limit', '5'));
    assert.match(byWords.stdout, /DID +NAME +REPUTATION/);
    assert.ok(byWords.stdout.includes(agentDid));
    assert.match(byWords.stdout, /1-1 of 1/);
    // Paging by cursor: one agent a page, the printed cursor gives the next one.
    const firstPage = ok(await run(caller, 'search', '--sort', 'created_at', '--limit', '1'));
    const cursor = /next page: add --cursor (\S+)/.exec(firstPage.stdout)?.[1];
    assert.ok(cursor !== undefined, firstPage.stdout);
    const secondPage = ok(
      await run(caller, 'search', '--sort', 'created_at', '--limit', '1', '--cursor', cursor),
    );
    assert.match(secondPage.stdout, /1 more of 2/);
    assert.ok(secondPage.stdout.includes(agentDid), 'the first agent registered is the second, older, one');
    const none = parseJson<{ agents: Json[] }>(
      ok(await run(caller, 'search', '--capability', 'uppercase', '--min-reputation', '90', '--json')),
    );
    assert.deepEqual(none.agents, []);
    const badRange = await run(caller, 'search', '--min-reputation', '101');
    assert.equal(badRange.code, 2);
    assert.match(badRange.stderr, /expected a number from 0 to 100/);
    const badSort = await run(caller, 'search', '--sort', 'name');
    assert.equal(badSort.code, 2);
  });

  it('tasks lists pending work while no worker runs; the waiting invoke times out with exit 1', async () => {
    const waiting = spawnCli(
      ['invoke', agentDid, 'uppercase', '--input', '{"text":"late"}', '--timeout', '2000', '--json'],
      {
        home: caller,
        env: { AGENT_REGISTRY_URL: registry.url },
      },
    );
    const pending = parseJson<{ tasks: Json[] }>(ok(await run(agent, 'tasks', '--wait', '20', '--json')));
    assert.equal(pending.tasks.length, 1);
    assert.equal(pending.tasks[0]?.capability, 'uppercase');
    assert.deepEqual(pending.tasks[0]?.input, { text: 'late' });
    const timedOut = await waiting.wait();
    assert.equal(timedOut.code, 1, timedOut.stderr);
    const error = parseJson<ErrorOutput>(timedOut).error;
    assert.equal(error.code, 'INVOCATION_TIMEOUT');
    assert.equal(error.status, 504);
    assert.match(error.task_id ?? '', /.+/);
    assert.equal(timedOut.stderr, '', 'no progress with --json');
  });

  it('worker serves the handler module; invoke prints the output; failures exit 1 with the task id', async () => {
    const worker = spawnCli(['worker', handlerModule, '--concurrency', '2', '--json'], {
      home: agent,
      env: { AGENT_REGISTRY_URL: registry.url },
    });
    try {
      await eventually(() => worker.output().stdout.includes('"event":"ready"'), 'the worker to start');

      const result = parseJson<Json>(
        ok(await run(caller, 'invoke', agentDid, 'uppercase', '--input', '{"text":"hello"}', '--json')),
      );
      assert.equal(result.status, 'completed');
      assert.deepEqual(result.output, { text: 'HELLO' });
      taskId = String(result.task_id);

      const inputFile = path.join(caller, 'input.json');
      fs.writeFileSync(inputFile, '{"text":"from a file"}');
      const human = ok(await run(caller, 'invoke', agentDid, 'uppercase', '--input', `@${inputFile}`));
      assert.deepEqual(JSON.parse(human.stdout), { text: 'FROM A FILE' });
      assert.match(human.stderr, /completed in/);

      const fromStdin = await runCli(['invoke', agentDid, 'uppercase', '--input', '@-', '--json'], {
        home: caller,
        env: { AGENT_REGISTRY_URL: registry.url },
        stdin: '{"text":"piped"}',
      });
      assert.deepEqual(parseJson<Json>(ok(fromStdin)).output, { text: 'PIPED' });

      const failed = await run(caller, 'invoke', agentDid, 'explode', '--json');
      assert.equal(failed.code, 1);
      const error = parseJson<ErrorOutput>(failed).error;
      assert.equal(error.status, 502);
      assert.match(error.task_id ?? '', /.+/);
      assert.match(JSON.stringify(error), /deliberate failure from the handler/);

      const badInput = await run(caller, 'invoke', agentDid, 'uppercase', '--input', '{text}');
      assert.equal(badInput.code, 2);
      assert.match(badInput.stderr, /--input: --input is not valid JSON|not valid JSON/);

      await eventually(
        () => worker.output().stdout.includes('"event":"failed"'),
        'the worker to report the failed task',
      );
    } finally {
      const stopped = await worker.stop();
      assert.equal(stopped.code, 0, stopped.stderr);
      const events = stopped.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event: string }).event);
      assert.ok(events.includes('completed'), events.join(','));
      assert.equal(events.at(-1), 'stopped');
    }
    // Stopped by SIGTERM, it told the registry: offline at once, not 90 s later.
    const shown = ok(await run(caller, 'show', agentDid));
    assert.match(shown.stdout, /availability: +offline/);
  });

  it('tasks get shows a task the caller created', async () => {
    const task = parseJson<Json>(ok(await run(caller, 'tasks', 'get', taskId, '--json')));
    assert.equal(task.task_id, taskId);
    assert.equal(task.status, 'completed');
    const notMine = await run(agent, 'tasks', 'get', taskId, '--json');
    assert.equal(notMine.code, 1);
    assert.equal(parseJson<ErrorOutput>(notMine).error.status, 403);
  });

  it('review, reviews and reputation', async () => {
    const review = parseJson<Json>(
      ok(
        await run(
          caller,
          'review',
          agentDid,
          '--rating',
          '9',
          '--comment',
          'loud and clear',
          '--task',
          taskId,
          '--json',
        ),
      ),
    );
    assert.equal(review.verified, true);
    assert.equal(review.rating, 9);

    const twice = await run(caller, 'review', agentDid, '--rating', '8', '--json');
    assert.equal(twice.code, 1);
    assert.equal(parseJson<ErrorOutput>(twice).error.code, 'REVIEW_EXISTS');
    const edited = parseJson<Json>(
      ok(await run(caller, 'review', agentDid, '--rating', '7.5', '--edit', '--json')),
    );
    assert.equal(edited.rating, 7.5);
    const badRating = await run(caller, 'review', agentDid, '--rating', '11');
    assert.equal(badRating.code, 2);
    const self = await run(agent, 'review', agentDid, '--rating', '10', '--json');
    assert.equal(self.code, 1);
    assert.equal(parseJson<ErrorOutput>(self).error.status, 403);

    const ofAgent = parseJson<{ reviews: Json[]; total: number }>(
      ok(await run(caller, 'reviews', agentDid, '--json')),
    );
    assert.equal(ofAgent.total, 1);
    assert.equal(ofAgent.reviews[0]?.comment, 'loud and clear');
    const own = ok(await run(agent, 'reviews'));
    assert.match(own.stdout, /REVIEW +REVIEWER +RATING +VERIFIED/);
    assert.match(own.stdout, /7\.50 +yes/);
    const mine = parseJson<{ reviews: Json[] }>(ok(await run(caller, 'reviews', '--mine', '--json')));
    assert.equal(mine.reviews[0]?.target_did, agentDid);

    const reputation = parseJson<Json>(ok(await run(caller, 'reputation', agentDid, '--json')));
    assert.equal(reputation.did, agentDid);
    assert.equal(reputation.total_reviews, 1);
    assert.equal(reputation.average_rating, 7.5);
    const bars = ok(await run(agent, 'reputation'));
    assert.match(bars.stdout, /average rating: +7\.5/);
    assert.match(bars.stdout, / 7 {2}#+ +1/);
  });

  it("verify proves an agent's profile is in the transparency log, and refuses another log's key", async () => {
    const verified = parseJson<Json>(ok(await run(caller, 'verify', agentDid, '--json')));
    assert.equal(verified.did, agentDid);
    assert.equal(verified.verified, true);
    assert.equal(verified.key_source, 'served');
    assert.equal(typeof verified.leaf_index, 'number');
    const text = ok(await run(caller, 'verify', agentDid));
    assert.match(
      text.stdout,
      /logged: +at position \d+ of \d+, verified \(against the key the registry serves\)/,
    );
    assert.match(text.stderr, /checked against the verifier key the registry itself serves/);
    const servedKey = (await (await fetch(`${registry.url}/log/verifier-key`)).text()).trim();
    const pinned = ok(await run(caller, 'verify', agentDid, '--verifier-key', servedKey));
    assert.match(pinned.stdout, /logged: +at position \d+ of \d+, verified$/m);
    assert.doesNotMatch(pinned.stderr, /itself serves/);
    const otherKey = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
    const refused = await run(caller, 'verify', agentDid, '--verifier-key', otherKey, '--json');
    assert.equal(refused.code, 5);
    assert.equal(parseJson<ErrorOutput>(refused).error.code, 'LOG_VERIFICATION_FAILED');
  });

  it('search sorts by every sort of the protocol, and without --sort by the default its help names', async () => {
    const order = async (...sort: string[]) =>
      parseJson<{ agents: Json[] }>(ok(await run(caller, 'search', ...sort, '--json'))).agents.map(
        (found) => found.did,
      );
    const byDefault = await order();
    // The reviewed agent outranks the unreviewed caller, which registered later: reputation, not newest.
    assert.equal(byDefault[0], agentDid);
    assert.deepEqual(byDefault, await order('--sort', SEARCH_LIMITS.sortDefault));
    assert.notDeepEqual(byDefault, await order('--sort', 'created_at'));
    for (const sort of SEARCH_LIMITS.sorts) {
      assert.deepEqual((await order('--sort', sort)).toSorted(), byDefault.toSorted(), sort);
    }
  });

  it('login gets a new token by signature and saves it', async () => {
    const configPath = path.join(agent, 'config.json');
    const before = fs.readFileSync(configPath, 'utf8');
    const login = parseJson<Json>(ok(await run(agent, 'login', '--json')));
    assert.equal(login.did, agentDid);
    assert.notEqual(fs.readFileSync(configPath, 'utf8'), before);
  });

  it('secp256k1 keys: the did:pkh DID is known at init and kept at registration; webhook mode shows its secret once', async () => {
    const wallet = tempHome();
    try {
      const init = parseJson<Json>(
        ok(
          await run(
            wallet,
            'init',
            '--name',
            'Wallet agent',
            '--key-type',
            'secp256k1',
            '--chain',
            'eip155:8453',
            '--json',
          ),
        ),
      );
      assert.match(String(init.did), /^did:pkh:eip155:8453:0x[0-9a-fA-F]{40}$/);
      const registered = parseJson<Json>(ok(await run(wallet, 'register', '--json')));
      assert.equal(registered.did, init.did);
      const webhook = parseJson<{ invocation: Json }>(
        ok(
          await run(
            wallet,
            'update',
            '--delivery',
            'webhook',
            '--webhook-url',
            'https://agent.example/hook',
            '--json',
          ),
        ),
      );
      assert.equal(webhook.invocation.delivery_mode, 'webhook');
      assert.match(String(webhook.invocation.webhook_secret), /^whsec_/);
      const human = ok(
        await run(wallet, 'update', '--delivery', 'webhook', '--webhook-url', 'https://agent.example/hook2'),
      );
      assert.match(human.stdout, /webhook url: +https:\/\/agent\.example\/hook2/);
      assert.match(human.stdout, /probes: +on/);
      // Opting out of availability probes keeps the rest of the settings.
      const optedOut = parseJson<{ invocation: Json }>(
        ok(await run(wallet, 'update', '--probes', 'off', '--json')),
      );
      assert.equal(optedOut.invocation.probes, false);
      assert.equal(optedOut.invocation.enabled, true);
      assert.equal(optedOut.invocation.delivery_mode, 'webhook');
      const disabled = parseJson<{ invocation: Json }>(
        ok(await run(wallet, 'update', '--disable', '--json')),
      );
      assert.equal(disabled.invocation.enabled, false);
    } finally {
      fs.rmSync(wallet, { recursive: true, force: true });
    }
  });

  it('keys import uses a given private key; keys generate --force keeps the old key as .bak', async () => {
    const imported = tempHome();
    try {
      // RFC 8032, test 1.
      const json = parseJson<Json>(
        ok(
          await run(
            imported,
            'keys',
            'import',
            '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
            '--json',
          ),
        ),
      );
      assert.equal(json.public_key, 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
      const bad = await run(imported, 'keys', 'import', 'zz', '--force');
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /not a valid ed25519 private key/);
      const replaced = parseJson<Json>(ok(await run(imported, 'keys', 'generate', '--force', '--json')));
      assert.notEqual(replaced.public_key, json.public_key);
      const backup = String(replaced.key_backup);
      assert.match(backup, /key\.json\.\d+\.bak$/);
      assert.equal(fs.statSync(backup).mode & 0o777, 0o600);
      assert.match(
        fs.readFileSync(backup, 'utf8'),
        /9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60/,
      );
    } finally {
      fs.rmSync(imported, { recursive: true, force: true });
    }
  });

  it('a token the registry refuses is renewed by signature and saved again', async () => {
    const configPath = path.join(agent, 'config.json');
    const config = JSON.parse(fs.readFileSync(configPath, 'utf8')) as {
      sessions: Record<string, { token: string }>;
    };
    const session = config.sessions[registry.url];
    assert.ok(session);
    session.token = 'not-a-token';
    fs.writeFileSync(configPath, JSON.stringify(config));
    ok(await run(agent, 'tasks', '--json'));
    const renewed = JSON.parse(fs.readFileSync(configPath, 'utf8')) as typeof config;
    assert.match(renewed.sessions[registry.url]?.token ?? '', /^ey/);
    assert.equal(fs.statSync(configPath).mode & 0o777, 0o600);
  });

  it('a registry that cannot be reached exits 3', async () => {
    const down = await runCli(['show', agentDid, '--json', '--registry', 'http://127.0.0.1:9'], {
      home: caller,
    });
    assert.equal(down.code, 3);
    assert.equal(parseJson<ErrorOutput>(down).error.code, 'NETWORK_ERROR');
    const human = await runCli(['search', '--registry', 'http://127.0.0.1:9'], { home: caller });
    assert.equal(human.code, 3);
    assert.match(human.stderr, /cannot reach the registry/);
  });

  it('deactivate needs --yes off a terminal, then the agent shows as deactivated', async () => {
    const unconfirmed = await run(agent, 'deactivate');
    assert.equal(unconfirmed.code, 2);
    assert.match(unconfirmed.stderr, /add --yes/);
    const done = parseJson<Json>(ok(await run(agent, 'deactivate', '--yes', '--json')));
    assert.equal(done.status, 'deactivated');
    const shown = parseJson<Json>(ok(await run(caller, 'show', agentDid, '--json')));
    assert.equal(shown.status, 'deactivated');
    const whoami = parseJson<Json>(ok(await run(agent, 'whoami', '--json')));
    assert.equal(whoami.status, 'deactivated');
  });
});
