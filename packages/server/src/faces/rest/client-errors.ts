import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { alreadyAnswered } from './sockets.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (bad Content-Length, bad chunked
 * encoding, oversized headers, garbage) still get our `{error, details, code}` JSON.
 */
const PARSER_ERRORS: Record<string, { status: number; code: string; details: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    details: 'The request headers exceed 16 KiB; send fewer or shorter headers',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    details: 'The request was not received in time; send it again',
  },
  ERR_HTTP_REQUEST_HEADERS_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    details: 'The request headers were not received in time; send them again',
  },
  HPE_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'INVALID_CONTENT_LENGTH',
    details: 'Content-Length must be one non-negative decimal integer',
  },
  HPE_UNEXPECTED_CONTENT_LENGTH: {
    status: 400,
    code: 'INVALID_CONTENT_LENGTH',
    details: 'Send either Content-Length or Transfer-Encoding: chunked, not both',
  },
  HPE_INVALID_CHUNK_SIZE: {
    status: 400,
    code: 'INVALID_TRANSFER_ENCODING',
    details: 'The chunked body is malformed: each chunk starts with its size in hexadecimal and CRLF',
  },
  HPE_INVALID_TRANSFER_ENCODING: {
    status: 400,
    code: 'INVALID_TRANSFER_ENCODING',
    details: 'Transfer-Encoding is malformed: send only chunked, and never together with Content-Length',
  },
};

const MALFORMED = {
  status: 400,
  code: 'MALFORMED_REQUEST',
  details: 'The request is not valid HTTP/1.1',
};

export function clientErrorHandler(log: FastifyBaseLogger) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const known = (error.code !== undefined ? PARSER_ERRORS[error.code] : undefined) ?? MALFORMED;
    log.debug({ err: error }, 'client error');
    if (socket.writable && !alreadyAnswered(socket)) {
      const title = http.STATUS_CODES[known.status] ?? 'Bad Request';
      const body = JSON.stringify({ error: title, details: known.details, code: known.code });
      socket.write(
        `HTTP/1.1 ${known.status} ${title}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          'X-Content-Type-Options: nosniff\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
