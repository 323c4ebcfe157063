import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { bearer } from '@agent-registry/testkit';
import { register } from '@agent-registry/testkit/in-process';
import { http } from '../../../support/http.js';
import {
  queueWorker,
  startListeningRegistry,
  type ListeningRegistry,
} from '../../../support/faces-helpers.js';

interface RawExchange {
  socket: net.Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves once the received bytes contain `text`. */
  waitFor(text: string): Promise<void>;
  closed: Promise<void>;
}

/** A loopback TCP connection that writes exactly what the test says, when it says. */
async function rawConnection(url: string): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    for (const waiter of waiters.filter((w) => text.includes(w.text))) waiter.resolve();
  });
  // A reset shows up as an error on the socket; the tests look at what was written and received.
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    received: () => text,
    waitFor: (wanted) =>
      text.includes(wanted)
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ text: wanted, resolve })),
    closed,
  };
}

const write = (socket: net.Socket, data: string | Buffer): Promise<Error | undefined> =>
  new Promise((resolve) => socket.write(data, (error) => resolve(error ?? undefined)));

describe('a body over the limit: the client reads the 413 while it is still sending', () => {
  let registry: ListeningRegistry;
  before(async () => {
    registry = await startListeningRegistry();
  });
  after(() => registry?.close());

  test('the rest of a 5 MB body is read and discarded after the 413, then the connection closes', async () => {
    const size = 5 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const raw = await rawConnection(registry.url);
    const head =
      'POST /api/agents/register HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${size}\r\n\r\n`;
    assert.equal(await write(raw.socket, head), undefined);
    assert.equal(await write(raw.socket, chunk), undefined);
    // The answer comes before the body is sent: the limit is known from Content-Length.
    await raw.waitFor('"code":"PAYLOAD_TOO_LARGE"}');
    assert.match(raw.received(), /^HTTP\/1\.1 413 /);
    assert.match(raw.received(), /\r\nconnection: close\r\n/i);
    // The client keeps sending the body it announced: no reset, no EPIPE.
    let failed: Error | undefined;
    for (let sent = chunk.length; sent < size && failed === undefined; sent += chunk.length) {
      failed = await write(raw.socket, chunk.subarray(0, Math.min(chunk.length, size - sent)));
    }
    assert.equal(failed, undefined, `writing the rest of the body failed: ${String(failed)}`);
    // Once it was all sent, the registry closes the connection.
    await raw.closed;
  });

  test("Node's fetch gets the 413 JSON for a 5 MB registration body", async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await fetch(`${registry.url}/api/agents/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pad: 'x'.repeat(5 * 1024 * 1024) }),
      });
      assert.equal(response.status, 413);
      assert.equal(((await response.json()) as { code: string }).code, 'PAYLOAD_TOO_LARGE');
    }
  });
});

describe('a request that never finishes arriving is cut off; answers that take long are not', () => {
  let registry: ListeningRegistry;
  before(async () => {
    registry = await startListeningRegistry({ REQUEST_TIMEOUT_SECONDS: '1' });
  });
  after(() => registry?.close());

  test('a body trickling in is answered 408 and its connection closed', { timeout: 30_000 }, async () => {
    const raw = await rawConnection(registry.url);
    await write(
      raw.socket,
      'POST /api/agents/register HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Content-Length: 250000\r\n\r\n{',
    );
    // One byte now and then keeps the connection busy, never the request complete.
    const trickle = setInterval(() => void write(raw.socket, ' '), 200);
    try {
      await raw.closed;
    } finally {
      clearInterval(trickle);
    }
    assert.match(raw.received(), /^HTTP\/1\.1 408 /);
    assert.match(raw.received(), /"code":"REQUEST_TIMEOUT"/);
  });

  test(
    'a 413 answered early is the only answer, even when the rest of the body is slower than the deadline',
    {
      timeout: 30_000,
    },
    async () => {
      const raw = await rawConnection(registry.url);
      await write(
        raw.socket,
        'POST /api/agents/register HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          `Content-Length: ${10 * 1024 * 1024}\r\n\r\n{`,
      );
      await raw.waitFor('"code":"PAYLOAD_TOO_LARGE"}');
      const trickle = setInterval(() => void write(raw.socket, ' '), 200);
      try {
        await raw.closed;
      } finally {
        clearInterval(trickle);
      }
      assert.equal(raw.received().match(/HTTP\/1\.1 /g)?.length, 1, raw.received());
    },
  );

  test('headers that never end are cut off too', { timeout: 30_000 }, async () => {
    const raw = await rawConnection(registry.url);
    await write(raw.socket, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => void write(raw.socket, 'X-A: b\r\n'), 200);
    try {
      await raw.closed;
    } finally {
      clearInterval(trickle);
    }
    assert.doesNotMatch(raw.received(), /^HTTP\/1\.1 200 /);
  });

  test('a long poll and a blocked invocation outlive the receive deadline', async () => {
    const worker = await queueWorker(registry, { name: 'Silent', capabilities: [{ type: 'echo' }] });
    const caller = await register(registry);
    const poll = await fetch(`${registry.url}/api/agent/tasks?wait=3`, { headers: bearer(worker.token) });
    assert.equal(poll.status, 200);
    // Taken by nobody: the invocation waits for its own deadline and answers 504.
    const invoked = await http(registry, 'POST', '/api/invoke', caller.token, {
      target_did: worker.did,
      capability: 'echo',
      input: {},
      timeout_ms: 2500,
    });
    assert.equal(invoked.status, 504, JSON.stringify(invoked.body));
  });
});

describe('connections per client address are bounded', () => {
  const openSockets = async (url: string, count: number): Promise<RawExchange[]> =>
    Promise.all(Array.from({ length: count }, () => rawConnection(url)));
  const isOpen = (raw: RawExchange): boolean => !raw.socket.destroyed && raw.socket.readyState === 'open';

  test('past MAX_CONNECTIONS_PER_ADDRESS a new connection is closed at once; a freed slot serves again', async () => {
    const registry = await startListeningRegistry({ MAX_CONNECTIONS_PER_ADDRESS: '4' });
    try {
      const held = await openSockets(registry.url, 4);
      const extra = await rawConnection(registry.url);
      await write(extra.socket, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await extra.closed;
      assert.equal(extra.received(), '', 'the refused connection got no answer');
      assert.ok(held.every(isOpen), 'the connections within the bound stay open');
      held[0]?.socket.destroy();
      await held[0]?.closed;
      const next = await rawConnection(registry.url);
      await write(next.socket, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      await next.closed;
      assert.match(next.received(), /^HTTP\/1\.1 200 /);
      for (const raw of held) raw.socket.destroy();
    } finally {
      await registry.close();
    }
  });

  test('behind a trusted proxy (every peer is the proxy) the bound is left to the proxy', async () => {
    const registry = await startListeningRegistry({ MAX_CONNECTIONS_PER_ADDRESS: '2', TRUST_PROXY: 'true' });
    try {
      const held = await openSockets(registry.url, 4);
      const response = await fetch(`${registry.url}/healthz`);
      assert.equal(response.status, 200);
      assert.ok(held.every(isOpen));
      for (const raw of held) raw.socket.destroy();
    } finally {
      await registry.close();
    }
  });
});
