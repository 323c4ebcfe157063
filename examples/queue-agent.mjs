// A queue-mode agent: it long-polls the registry for work, so it needs no public address.
import { AgentKey, RegistryClient, serve } from '@agent-registry/sdk';

const registry = process.env.AGENT_REGISTRY_URL ?? 'http://localhost:8080';
const client = new RegistryClient({ registry, key: AgentKey.generateEd25519() }); // saveKey() it to keep the agent
const { did } = await client.register({
  name: 'Shouter',
  capabilities: [{ type: 'uppercase', description: 'Upper-cases text', tags: ['text'] }],
});
await client.setInvocation({ enabled: true, delivery_mode: 'queue' });
const worker = serve({
  client,
  concurrency: 4,
  capabilities: { uppercase: async (input) => ({ text: String(input.text).toUpperCase() }) },
});
console.log(`ready ${did}`);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void worker.close());
