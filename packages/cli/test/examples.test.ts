import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '@agent-registry/testkit';
import { repoRoot, startRegistry, type RunningRegistry } from './harness.js';

/** Runs `node examples/<file>` as a reader would, with the registry's address in AGENT_REGISTRY_URL. */
function runExample(file: string, registry: RunningRegistry, args: string[] = []) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'examples', file), ...args], {
    cwd: repoRoot,
    env: { ...process.env, AGENT_REGISTRY_URL: registry.url, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    output: () => ({ stdout, stderr }),
    exited,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Polls `read` until it returns true (async conditions; `eventually` takes synchronous ones). */
async function until(read: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!(await read())) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('examples/ against a real registry', () => {
  let registry: RunningRegistry;
  before(async () => {
    // Availability probes on, as with default settings, but every second: a webhook example must
    // answer the registry's `registry.ping` (no task, no input) and keep running.
    registry = await startRegistry({ PROBE_INTERVAL_SECONDS: '1' });
  });
  after(() => registry.close());

  for (const [agentFile, capability, expected] of [
    ['queue-agent.mjs', 'uppercase', 'HELLO FROM THE CALLER'],
    ['webhook-agent.mjs', 'reverse', 'rellac eht morf olleh'],
  ] as const) {
    it(`caller.mjs finds, invokes and reviews ${agentFile}`, async () => {
      const agent = runExample(agentFile, registry);
      try {
        await eventually(() => agent.output().stdout.includes('ready did:'), `${agentFile} to start`);
        const did = /ready (\S+)/.exec(agent.output().stdout)?.[1];
        if (agentFile === 'webhook-agent.mjs') {
          // Before any task is delivered, only an answered probe can make the agent online.
          await until(async () => {
            assert.equal(agent.child.exitCode, null, `${agentFile} exited: ${agent.output().stderr}`);
            const response = await fetch(`${registry.url}/api/agents/${encodeURIComponent(did ?? '')}`);
            const profile = (await response.json()) as { availability?: { status?: string } };
            return profile.availability?.status === 'online';
          }, `${agentFile} to answer a probe`);
        }
        const caller = runExample('caller.mjs', registry, [capability]);
        const code = await caller.exited;
        assert.equal(code, 0, caller.output().stderr);
        const [invoked, reviewed] = lines(caller.output().stdout);
        assert.deepEqual(invoked, { agent: did, output: { text: expected } });
        assert.equal(reviewed?.verified, true);
      } finally {
        const code = await agent.stop();
        assert.equal(code, 0, agent.output().stderr);
      }
    });
  }
});
