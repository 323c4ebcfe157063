// A webhook-mode agent: the registry POSTs each task to this server, signed with the agent's secret
// (Standard Webhooks). The answer `{"output": ...}` goes straight back to the caller.
import http from 'node:http';
import { AgentKey, RegistryClient, isRegistryPing, verifyWebhook } from '@agent-registry/sdk';

const registry = process.env.AGENT_REGISTRY_URL ?? 'http://localhost:8080';
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1'; // 0.0.0.0 to accept deliveries from another machine
const publicUrl = process.env.WEBHOOK_PUBLIC_URL; // where the registry reaches this server (https in production)

const client = new RegistryClient({ registry, key: AgentKey.generateEd25519() });
const { did } = await client.register({
  name: 'Reverser',
  capabilities: [{ type: 'reverse', description: 'Reverses text', tags: ['text'] }],
});

let secret = '';
const server = http.createServer(async (request, response) => {
  // An async request handler's exception would escape node:http and end the process: answer 500 instead.
  try {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body;
    try {
      body = verifyWebhook(secret, rawBody, request.headers); // checks signature and timestamp
    } catch {
      response.writeHead(401).end();
      return;
    }
    // The registry's availability probe (every few minutes): no task, no input; a 2xx answer is enough.
    if (isRegistryPing(body)) {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    const text = String(body.input?.text ?? '');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ output: { text: [...text].reverse().join('') } }));
  } catch (error) {
    console.error(error);
    if (!response.headersSent) response.writeHead(500);
    response.end();
  }
});
await new Promise((resolve) => server.listen(port, host, resolve));
const webhookUrl = publicUrl ?? `http://127.0.0.1:${server.address().port}/`;

// Without a webhook_secret the registry generates one and returns it in this answer only.
const invocation = await client.setInvocation({
  enabled: true,
  delivery_mode: 'webhook',
  webhook_url: webhookUrl,
});
secret = invocation.webhook_secret;
console.log(`ready ${did}`);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close());
