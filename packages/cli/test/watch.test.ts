import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { verifyWatchDelivery, type WatchDelivery } from '@agent-registry/sdk';
import {
  ok,
  parseJson,
  runCli,
  startRegistry,
  tempHome,
  type Json,
  type RunningRegistry,
} from './harness.js';

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('watch add, list and remove against a real registry, deliveries verified with the SDK', () => {
  let registry: RunningRegistry;
  let hook: http.Server;
  let hookUrl: string;
  const received: Delivery[] = [];
  const waiting: ((delivery: Delivery) => void)[] = [];
  const watcher = tempHome();
  const target = tempHome();
  const as =
    (home: string) =>
    (...args: string[]) =>
      runCli(args, { home, env: { AGENT_REGISTRY_URL: registry.url } });

  before(async () => {
    registry = await startRegistry({ WATCH_TICK_MS: '100' });
    hook = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        response.writeHead(204).end();
        const delivery = { headers: request.headers, body };
        const next = waiting.shift();
        if (next === undefined) received.push(delivery);
        else next(delivery);
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/registry`;
    ok(await as(watcher)('init', '--name', 'Watcher', '--capability', 'general'));
    ok(await as(watcher)('register'));
    ok(await as(target)('init', '--name', 'Watched', '--capability', 'general'));
    ok(await as(target)('register'));
  });
  after(async () => {
    await registry.close();
    await new Promise<void>((resolve) => hook.close(() => resolve()));
    for (const home of [watcher, target]) fs.rmSync(home, { recursive: true, force: true });
  });

  const nextDelivery = (): Promise<Delivery> =>
    new Promise((resolve) => {
      const first = received.shift();
      if (first !== undefined) resolve(first);
      else waiting.push(resolve);
    });

  it('a watch made with the CLI delivers a signed agent.updated; removed, it is gone from the list', async () => {
    const did = String(parseJson<Json>(ok(await as(target)('whoami', '--json'))).did);
    const created = parseJson<Json>(
      ok(await as(watcher)('watch', 'add', did, hookUrl, '--events', 'agent.updated', '--json')),
    );
    assert.match(String(created.id), /^wat_/);
    assert.match(String(created.secret), /^whsec_/);
    const text = ok(await as(watcher)('watch', 'list')).stdout;
    assert.match(text, new RegExp(String(created.id)));
    assert.match(text, /agent\.updated/);

    const profileFile = path.join(target, 'profile.json');
    const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8')) as Json;
    fs.writeFileSync(profileFile, JSON.stringify({ ...profile, description: 'Changed while watched' }));
    ok(await as(target)('update'));
    const delivery = await nextDelivery();
    const message: WatchDelivery = verifyWatchDelivery(
      String(created.secret),
      delivery.body,
      delivery.headers,
    );
    assert.equal(message.type, 'agent.updated');
    assert.equal(message.data.target, did);
    assert.throws(() => verifyWatchDelivery(String(created.secret), `${delivery.body} `, delivery.headers));

    const removed = parseJson<Json>(ok(await as(watcher)('watch', 'remove', String(created.id), '--json')));
    assert.equal(removed.removed, true);
    const listed = parseJson<{ watches: unknown[] }>(ok(await as(watcher)('watch', 'list', '--json')));
    assert.deepEqual(listed.watches, []);
    const again = await as(watcher)('watch', 'remove', String(created.id));
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /WATCH_NOT_FOUND/);
  });
});
