import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AgentCardHost {
  /** http://127.0.0.1:<port>: the imported entry's home_registry. */
  origin: string;
  /** The card's URL, as FEDERATION_A2A_CARDS names it. */
  cardUrl: string;
  close(): Promise<void>;
}

/**
 * An unsigned A2A agent card (v1.0) at /.well-known/agent-card.json on this machine, for a registry
 * to import as a remote entry (FEDERATION_A2A_CARDS, with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). Each
 * skill becomes a capability of the entry.
 */
export async function serveAgentCard(card: {
  name: string;
  description: string;
  skill: string;
}): Promise<AgentCardHost> {
  const body = JSON.stringify({
    name: card.name,
    description: card.description,
    version: '1.0.0',
    supportedInterfaces: [
      { url: 'https://agents.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: card.skill, name: card.skill, description: card.description, tags: [card.skill] }],
  });
  const server = http.createServer((request, response) => {
    if (request.url === '/.well-known/agent-card.json')
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    cardUrl: `${origin}/.well-known/agent-card.json`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
