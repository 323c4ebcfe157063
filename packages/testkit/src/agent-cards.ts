import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { startRegistryProcess, type RegistryProcess } from './registry-process.js';

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
export interface CardListing {
  name: string;
  description: string;
  skill: string;
}

export async function serveAgentCard(card: CardListing): Promise<AgentCardHost> {
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

/**
 * A registry process (on TEST_DATABASE's kind) that imports one served card per listing and holds them
 * all as remote entries before this resolves; `close` stops it, drops its database and the card hosts.
 */
export async function startRegistryImportingCards(cards: CardListing[]): Promise<{
  registry: RegistryProcess;
  hosts: AgentCardHost[];
  close(): Promise<void>;
}> {
  const hosts = await Promise.all(cards.map((card) => serveAgentCard(card)));
  let database: TestDatabase | undefined;
  let registry: RegistryProcess | undefined;
  const close = async (): Promise<void> => {
    await registry?.stop();
    await database?.drop();
    await Promise.all(hosts.map((host) => host.close()));
  };
  try {
    database = await createTestDatabase();
    registry = await startRegistryProcess({
      DATABASE_URL: database.url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      FEDERATION_A2A_CARDS: hosts.map((host) => host.cardUrl).join(','),
    });
    await untilRemoteEntries(registry.url, cards.length, registry.output);
  } catch (error) {
    await close();
    throw error;
  }
  return { registry, hosts, close };
}

/**
 * Waits until the registry at `registryUrl` holds `count` remote entries (its imports run soon after
 * it starts); fails with `output()`, the registry's log, after 30 seconds.
 */
async function untilRemoteEntries(registryUrl: string, count: number, output: () => string): Promise<void> {
  for (let tries = 0; ; tries += 1) {
    const response = await fetch(`${registryUrl}/api/federation/entries`);
    const page = (await response.json()) as { entries?: unknown[] };
    if ((page.entries?.length ?? 0) >= count) return;
    if (tries >= 300) throw new Error(`the registry did not import ${count} entries:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
