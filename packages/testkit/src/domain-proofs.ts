import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Loopback stand-ins for the places a domain proof lives: an HTTP server answering
 * /.well-known/agent-registry.json per Host header, and a DNS server answering TXT questions.
 * Tests change what they publish between checks.
 */

/** Serves `documents.get(host)` (host with port, as the Host header says) at the well-known path. */
export async function startWellKnownServer(): Promise<{
  port: number;
  documents: Map<string, unknown>;
  close(): Promise<void>;
}> {
  const documents = new Map<string, unknown>();
  const server = http.createServer((request, response) => {
    const document = documents.get(request.headers.host ?? '');
    if (request.url !== '/.well-known/agent-registry.json' || document === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    documents,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const TXT = 16;

/**
 * A minimal DNS server over UDP: answers a TXT question for a name in `records` with its strings (one
 * TXT record each), and NXDOMAIN for any other name or question type.
 */
export async function startTxtServer(): Promise<{
  address: string;
  records: Map<string, string[]>;
  close(): Promise<void>;
}> {
  const records = new Map<string, string[]>();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset] as number;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    offset += 1;
    const type = query.readUInt16BE(offset);
    const question = query.subarray(12, offset + 4);
    const texts = type === TXT ? records.get(labels.join('.').toLowerCase()) : undefined;
    const answers = (texts ?? []).map((text) => {
      const data = Buffer.concat([Buffer.from([Buffer.byteLength(text)]), Buffer.from(text)]);
      const head = Buffer.alloc(12);
      head.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      head.writeUInt16BE(TXT, 2);
      head.writeUInt16BE(1, 4); // class IN
      head.writeUInt32BE(0, 6); // TTL: nothing cached
      head.writeUInt16BE(data.length, 10);
      return Buffer.concat([head, data]);
    });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    // A response, recursion desired and available; rcode 3 (NXDOMAIN) when there is nothing to say.
    header.writeUInt16BE(texts === undefined ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(Buffer.concat([header, question, ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
