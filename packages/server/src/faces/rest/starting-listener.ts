import { Worker } from 'node:worker_threads';
import { DatabaseUnavailableError } from '../../kernel/errors.js';
import type { RunningBuild } from '../../kernel/version.js';

export interface StartingListener {
  close(): Promise<void>;
}

// CommonJS run by a worker thread (eval), so it needs no loader and works from src (tests) and dist.
// A thread of its own: SQLite statements, and SQLite's wait for a lock, block the main thread's event
// loop for as long as they run, and the probe must be answered all the same.
const WORKER_SOURCE = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { healthBody, refusal } = workerData;
const server = http.createServer((request, response) => {
  const path = (request.url || '').split('?')[0];
  if (request.method === 'GET' && path === '/healthz') {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.end(healthBody);
    return;
  }
  response.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8', ...refusal.headers });
  response.end(refusal.body);
});
server.once('error', (error) => {
  parentPort.postMessage({ error: { message: error.message, code: error.code, syscall: error.syscall } });
});
server.listen({ port: workerData.port, host: workerData.host }, () => parentPort.postMessage({ listening: true }));
parentPort.on('message', () => {
  server.close(() => {
    parentPort.postMessage({ closed: true });
    parentPort.close();
  });
  server.closeAllConnections();
});
`;

type WorkerMessage =
  { listening: true } | { closed: true } | { error: { message: string; code?: string; syscall?: string } };

/**
 * Holds the port while the node opens its database and migrates, which can take minutes on a large
 * database: `/healthz` answers 200 (`status: starting`), so a liveness probe leaves the process alone,
 * and everything else, `/readyz` included, answers 503 DATABASE_UNAVAILABLE with Retry-After, so no
 * traffic is sent yet. Closed right before the registry itself listens on the same port.
 */
export async function listenWhileStarting(
  port: number,
  host: string,
  build: Pick<RunningBuild, 'version' | 'commit'>,
): Promise<StartingListener> {
  const starting = new DatabaseUnavailableError(
    undefined,
    'The registry is starting (opening and migrating its database); retry shortly',
  );
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      port,
      host,
      healthBody: JSON.stringify({ status: 'starting', version: build.version, commit: build.commit }),
      refusal: {
        status: starting.status,
        headers: starting.headers,
        body: JSON.stringify({ error: starting.title, details: starting.details, code: starting.code }),
      },
    },
  });
  const next = (): Promise<WorkerMessage> =>
    new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const first = await next();
  if ('error' in first) {
    await worker.terminate();
    // Same shape as a listen error of the registry itself, so start-up failures explain it the same way.
    throw Object.assign(new Error(first.error.message), first.error);
  }
  let closing: Promise<void> | undefined;
  return {
    // Once: start-up closes it before the registry listens, and a failure after that closes all it started.
    close: () =>
      (closing ??= (async () => {
        const closed = next();
        worker.postMessage('close');
        await closed;
      })()),
  };
}
