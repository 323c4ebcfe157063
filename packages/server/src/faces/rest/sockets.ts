import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';

/** How often Node checks for requests past their receive deadline (its default is 30 s). */
export const CONNECTIONS_CHECK_MS = 1_000;

/**
 * At most `max` open connections per peer address: a client over it has its new connections closed
 * at once (as net.Server's maxConnections does), so one address cannot hold every file descriptor.
 * Behind a trusted proxy every peer is the proxy, which then bounds its clients itself.
 */
export function boundConnectionsPerAddress(server: Server, max: number): void {
  const open = new Map<string, number>();
  // Before the HTTP parser is attached: a refused socket never reaches it.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const count = open.get(address) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** Sockets whose request was answered while its body was still arriving. */
const answered = new WeakSet<Socket>();

/** The request on this socket has its answer: a later parser error (the receive deadline) adds none. */
export const alreadyAnswered = (socket: Socket): boolean => answered.has(socket);

/** The most a refused body is read (and thrown away) after its answer, and for how long. */
const LINGER_BYTES = 32 * 1024 * 1024;
const LINGER_MS = 5_000;

/**
 * A body refused before it was read (413) leaves the client still sending. Closing the socket with
 * unread bytes makes the kernel send a reset, which can destroy the answer before the client reads it
 * (Node's fetch reports EPIPE), and even a clean close stops a client that is still writing. So once
 * the answer (with Connection: close) is written, the rest of the body is read and discarded, up to a
 * bound in bytes and time, and only then is the socket closed: the lingering close HTTP servers do.
 */
export function lingerAfterAnswer(request: FastifyRequest): void {
  const { socket } = request.raw;
  if (request.raw.complete || socket.destroyed) return;
  answered.add(socket);
  // Node destroys the socket with destroySoon() once a Connection: close answer is written.
  socket.destroySoon = () => {
    let drained = 0;
    const close = (): void => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    request.raw.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > LINGER_BYTES) close();
    });
    request.raw.once('end', close);
    socket.once('end', close);
    socket.once('close', () => clearTimeout(timer));
    request.raw.resume();
  };
}

/** What the registry's HTTP server is built from (the network settings). */
export interface ServerSettings {
  /** How long a client has to send a whole request (headers and body). */
  requestTimeoutMs: number;
}

/** Fastify's own default, kept when the registry builds the server itself. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The registry's HTTP server with the timeouts the app is built with (app.ts), made before the app so
 * that it can listen from the first moment of start-up and be handed to the app without closing.
 */
export function createRegistryServer(network: ServerSettings): Server {
  const server = createServer({
    requestTimeout: network.requestTimeoutMs,
    headersTimeout: network.requestTimeoutMs,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}
