import { spawn, type ChildProcess } from 'node:child_process';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { DatabaseUnavailableError } from '../../kernel/errors.js';
import type { RunningBuild } from '../../kernel/version.js';
import { createRegistryServer, type ServerSettings } from './sockets.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export interface StartingListener {
  /** The registry's one HTTP server: it listens from the start, and the app takes it over once ready. */
  readonly server: Server;
  /** The app answers every request from here on; the helper process lets go of its copy of the socket. */
  handOver(handler: Handler): Promise<void>;
  /** Stops accepting connections and ends the idle ones; requests in flight go on. */
  stopAccepting(): void;
  /** Stops accepting, ends every connection left, and waits for the helper to exit. Once. */
  close(): Promise<void>;
}

// CommonJS run by a second Node process (-e), so it needs no loader and works from src (tests) and dist.
// A process of its own: SQLite statements, and SQLite's wait for a lock, block the main thread's event
// loop for as long as they run, and the probe must be answered all the same. It serves a duplicate of
// the registry's own listening socket (sent over IPC), so the port never closes at the hand-over.
const HELPER_SOURCE = `
const http = require('node:http');
const { healthBody, refusal } = JSON.parse(process.argv[1]);
const answer = http.createServer((request, response) => {
  const path = (request.url || '').split('?')[0];
  if (request.method === 'GET' && path === '/healthz') {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    response.end(healthBody);
    return;
  }
  response.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8', connection: 'close', ...refusal.headers });
  response.end(refusal.body);
});
let shared;
const stop = () => {
  if (shared !== undefined) shared.close();
  answer.close(() => process.exit(0));
  answer.closeIdleConnections();
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('message', (message, handle) => {
  if (message === 'serve' && handle) {
    shared = handle;
    handle.on('connection', (socket) => answer.emit('connection', socket));
    process.send('serving');
  } else if (message === 'connection' && handle) {
    answer.emit('connection', handle);
    handle.resume();
  } else if (message === 'stop') stop();
});
// The registry ended without a word (killed): nothing is left to hold the port for.
process.on('disconnect', () => process.exit(0));
`;

interface Answers {
  healthBody: string;
  refusal: { status: number; headers: Record<string, string>; body: string };
}

function startingAnswers(build: Pick<RunningBuild, 'version' | 'commit'>): Answers {
  const starting = new DatabaseUnavailableError(
    undefined,
    'The registry is starting (opening and migrating its database); retry shortly',
  );
  return {
    healthBody: JSON.stringify({ status: 'starting', version: build.version, commit: build.commit }),
    refusal: {
      status: starting.status,
      headers: starting.headers,
      body: JSON.stringify({ error: starting.title, details: starting.details, code: starting.code }),
    },
  };
}

/** The helper process, serving a copy of the listening socket; undefined when it cannot be started. */
async function startHelper(server: Server, answers: Answers): Promise<ChildProcess | undefined> {
  const child = spawn(process.execPath, ['-e', HELPER_SOURCE, JSON.stringify(answers)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {},
  });
  const serving = await new Promise<boolean>((resolve) => {
    child.once('message', (message) => resolve(message === 'serving'));
    child.once('error', () => resolve(false));
    child.once('exit', () => resolve(false));
    child.send('serve', server);
  });
  if (serving) return child;
  child.kill();
  return undefined;
}

/**
 * Listens on the registry's port at once and holds it while the node opens its database and migrates,
 * which can take minutes on a large database: `/healthz` answers 200 (`status: starting`), so a
 * liveness probe leaves the process alone, and everything else, `/readyz` included, answers 503
 * DATABASE_UNAVAILABLE with Retry-After, so no traffic is sent yet. The same socket is then handed to
 * the app: the port answers without a gap from the first `starting` to `ready`.
 */
export async function listenWhileStarting(
  network: ServerSettings & { port: number; host: string },
  build: Pick<RunningBuild, 'version' | 'commit'>,
): Promise<StartingListener> {
  const answers = startingAnswers(build);
  const starting: Handler = (request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const health = request.method === 'GET' && path === '/healthz';
    response.writeHead(health ? 200 : answers.refusal.status, {
      'content-type': 'application/json; charset=utf-8',
      // One request per connection: none is left open to this answer when the app takes over.
      connection: 'close',
      ...(health ? {} : answers.refusal.headers),
    });
    response.end(health ? answers.healthBody : answers.refusal.body);
  };
  const server = createRegistryServer(network);
  server.on('request', starting);
  // While starting, a connection this process accepts goes to the helper before a byte of it is read:
  // the main thread may block (a SQLite lock) right after accepting, and the answer must not wait.
  const serveHere = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const pausing = server as Server & { pauseOnConnect: boolean };
  pausing.pauseOnConnect = true;
  const forward = (socket: Socket): void => {
    if (helper?.connected === true) {
      helper.send('connection', socket);
      // Its handle is the helper's now: this side only lets go, so what counted it sees it close.
      socket.destroy();
      return;
    }
    for (const listener of serveHere) listener.call(server, socket);
    socket.resume();
  };
  server.on('connection', forward);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: network.port, host: network.host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let helper: ChildProcess | undefined;
  helper = await startHelper(server, answers);
  const stopHelper = async (): Promise<void> => {
    const child = helper;
    helper = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.connected) child.send('stop');
    else child.kill();
    await exited;
  };
  let closed: Promise<void> | undefined;
  const stopAccepting = (): void => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
  };
  let closing: Promise<void> | undefined;
  return {
    server,
    handOver: async (handler) => {
      server.off('request', starting);
      server.on('request', handler);
      server.off('connection', forward);
      for (const listener of serveHere) server.on('connection', listener);
      pausing.pauseOnConnect = false;
      await stopHelper();
    },
    stopAccepting,
    close: () =>
      (closing ??= (async () => {
        stopAccepting();
        server.closeAllConnections();
        await Promise.all([closed, stopHelper()]);
      })()),
  };
}
