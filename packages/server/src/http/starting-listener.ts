import http from 'node:http';
import { DatabaseUnavailableError } from '../errors.js';
import type { BuildInfo } from '../version.js';

export interface StartingListener {
  close(): Promise<void>;
}

/**
 * Holds the port while the node opens its database and migrates, which can take minutes on a large
 * database: `/healthz` answers 200 (`status: starting`), so a liveness probe leaves the process alone,
 * and everything else, `/readyz` included, answers 503 DATABASE_UNAVAILABLE with Retry-After, so no
 * traffic is sent yet. Closed right before the registry itself listens on the same port.
 */
export async function listenWhileStarting(
  port: number,
  host: string,
  build: Pick<BuildInfo, 'version' | 'commit'>,
): Promise<StartingListener> {
  const starting = new DatabaseUnavailableError(
    undefined,
    'The registry is starting (opening and migrating its database); retry shortly',
  );
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method === 'GET' && path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify({ status: 'starting', version: build.version, commit: build.commit }));
      return;
    }
    response.writeHead(starting.status, {
      'content-type': 'application/json; charset=utf-8',
      ...starting.headers,
    });
    response.end(JSON.stringify({ error: starting.title, details: starting.details, code: starting.code }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
