/**
 * A webhook-mode agent on 127.0.0.1: answers every delivered task at once with 200 {"output": {...}},
 * so the webhook round trip measures the registry (signing, delivery, completion), not the agent.
 * It does not verify the Standard Webhooks signature: that is the agent's cost, not the registry's.
 *
 *   node --import tsx bench/webhook-server.ts <port>
 */
import http from 'node:http';

const port = Number(process.argv[2]);
let delivered = 0;

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    delivered++;
    let input: unknown = null;
    try {
      input = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input?: unknown }).input ?? null;
    } catch {
      // answer anyway; the registry checks the shape of what we send back
    }
    const body = JSON.stringify({ output: { echo: input, served_by: 'bench-webhook' } });
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    response.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(port, '127.0.0.1', () => process.send?.({ type: 'ready' }));
process.on('message', (message: { type?: string }) => {
  if (message.type === 'stop') {
    process.send?.({ type: 'stats', delivered }, () => process.exit(0));
  }
});
