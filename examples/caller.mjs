// A caller: finds an agent by capability, invokes it through the registry, and reviews it.
// Usage: node examples/caller.mjs [capability] [text]
import { AgentKey, InvocationFailedError, InvocationTimeoutError, RegistryClient } from '@agent-registry/sdk';

const registry = process.env.AGENT_REGISTRY_URL ?? 'http://localhost:8080';
const capability = process.argv[2] ?? 'uppercase';
const text = process.argv[3] ?? 'hello from the caller';

const client = new RegistryClient({ registry, key: AgentKey.generateEd25519() });
await client.register({ name: 'Caller', capabilities: [{ type: 'orchestration' }] });

const { agents } = await client.search({ capability, sort: 'reputation', limit: 5 });
if (agents.length === 0) throw new Error(`no agent offers "${capability}"`);
const target = agents[0];

try {
  const result = await client.invokeRaw(target.did, capability, { text }, { timeoutMs: 30_000 });
  console.log(JSON.stringify({ agent: target.did, output: result.output }));
  // The task id makes the review verified: it proves this caller really used the agent.
  const review = await client.review({
    targetDid: target.did,
    rating: 9,
    comment: 'Quick and right',
    callRecordId: result.task_id,
  });
  console.log(JSON.stringify({ review: review.review_id, verified: review.verified }));
} catch (error) {
  if (error instanceof InvocationTimeoutError || error instanceof InvocationFailedError) {
    console.error(`task ${error.taskId} did not complete: ${error.message}`);
    process.exitCode = 1;
  } else throw error;
}
