import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import {
  AgentKey,
  RegistryClient,
  RegistryError,
  WebhookVerificationError,
  verifyWatchDelivery,
} from '../src/index.js';
import {
  createTestDatabase,
  eventually,
  type RegistryProcess,
  type TestDatabase,
} from '@agent-registry/testkit';
import { registryProcess } from './registry-process.js';

let database: TestDatabase;
let registry: RegistryProcess;
before(async () => {
  database = await createTestDatabase();
  registry = await registryProcess(database);
});
after(async () => {
  await registry.stop();
  await database.drop();
});

test('client.watches: create, list, remove; a delivery verifies with verifyWatchDelivery', async () => {
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/watch`;

  const watcher = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
  await watcher.register({ name: 'Watcher', capabilities: [{ type: 'watching' }] });
  const target = new RegistryClient({ registry: registry.url, key: AgentKey.generateEd25519() });
  const { did } = await target.register({ name: 'Watched', capabilities: [{ type: 'changing' }] });

  const watch = await watcher.watches.create({ target: did, url, events: ['agent.updated'] });
  assert.match(watch.secret, /^whsec_/);
  assert.deepEqual(
    (await watcher.watches.list()).watches.map((item) => item.id),
    [watch.id],
  );
  await target.updateAgent({ description: 'changed' });
  await eventually(() => received.length > 0, 'a delivery');
  const delivery = received[0]!;
  const event = verifyWatchDelivery(watch.secret, delivery.body, delivery.headers);
  assert.equal(event.type, 'agent.updated');
  assert.equal(event.data.target, did);
  assert.throws(
    () =>
      verifyWatchDelivery(
        watch.secret,
        delivery.body.replace('agent.updated', 'agent.deactivated'),
        delivery.headers,
      ),
    WebhookVerificationError,
  );

  await watcher.watches.remove(watch.id);
  assert.deepEqual((await watcher.watches.list()).watches, []);
  await assert.rejects(watcher.watches.remove(watch.id), (error: unknown) => {
    assert.ok(error instanceof RegistryError);
    assert.equal(error.code, 'WATCH_NOT_FOUND');
    return true;
  });
});
